import type { IdempotencyStore } from '../stores/store.js'
import type { LocalCache } from './local-cache.js'
import type { UnitOutcome } from './report.js'

/** What the policy function is told about a failed unit of work. */
export interface FailureInfo {
  /** Delivery attempt: an SQS record's `ApproximateReceiveCount`; 1 for a whole event. */
  attempt: number
  /** The stored key. */
  key: string
}

/** `'delete'`: a redelivery runs again. `'fail'`: keep a FAILED record; a redelivery is reported failed without running. */
export type FailureDecision = 'delete' | 'fail'

/** The retry policy: a fixed decision or one made per failure. */
export type FailurePolicy = FailureDecision | ((error: unknown, info: FailureInfo) => FailureDecision)

/** A console-like logger; `console` itself fits. */
export interface IdempotencyLogger {
  warn: (...data: unknown[]) => void
  error: (...data: unknown[]) => void
}

/** One unit of work (an SQS record, or a whole event) once its key is known. */
export interface Unit {
  key: string
  payloadHash?: string
  attempt: number
}

/** Everything the record lifecycle needs, resolved from the middleware options. */
export interface LifecycleConfig {
  store: IdempotencyStore
  expiresAfterSeconds: number
  onFailure: FailurePolicy
  logger: IdempotencyLogger
  now: () => number
  clockSkewMs: number
  cache?: LocalCache
  onOutcome?: (outcome: UnitOutcome) => void
  /** `effects: 'transact-only'`: batch records are not claimed before they run; their commit claims them. */
  transactOnly?: boolean
}
