import type { IdempotencyRecord, IdempotencyStore } from '../stores/store.js'
import type { Log } from '../observe/log.js'
import type { FailurePolicy, OutcomeReport } from '../types.js'

/** Everything the record lifecycle needs, resolved from the middleware options. */
export interface LifecycleConfig {
  store: IdempotencyStore<any>
  expiresAfterSeconds: number
  onFailure: FailurePolicy
  /** Our log, at the `logLevel` option's level, over the `logger` option. */
  log: Log
  now: () => number
  clockSkewMs: number
  /** COMPLETED records this instance has seen (`LocalCache`, claim.ts), when `localCacheSize` is set. */
  cache?: CompletedCache
  onOutcome?: (outcome: OutcomeReport) => void
  /** `effects: 'transact-only'`: batch records are not claimed before they run; their commit claims them. */
  transactOnly?: boolean
  /**
   * This invocation's bound on each store call (see `withinDeadline`); set per batch or event, never on
   * the shared config.
   */
  deadline?: StoreDeadline
}

/**
 * How long a store call of one invocation may wait for its answer. Made per invocation (per
 * batch, per event) from its own Lambda context: Lambda Managed Instances run many invocations
 * in one process, sharing one middleware and one store, so the deadline is never the process's.
 */
export interface StoreDeadline {
  /** Milliseconds the call starting now may wait. */
  budgetMs: () => number
}

/** What the lifecycle asks of the local cache: a COMPLETED record not yet expired at `nowMs`, and to remember one. */
export interface CompletedCache {
  get: (key: string, nowMs: number) => IdempotencyRecord | undefined
  remember: (record: IdempotencyRecord) => void
}
