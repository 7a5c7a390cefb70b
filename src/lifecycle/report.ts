import {
  IdempotencyFailedError,
  IdempotencyHeldBackError,
  IdempotencyInProgressError,
  IdempotencyKeyError,
  IdempotencyPayloadMismatchError,
  IdempotencyStoreError
} from '../errors.js'
import type { IdempotencyLogger } from './config.js'

/** What finally became of one unit of work (an SQS record, or a whole event). */
export type OutcomeKind =
  /** It ran and its result is stored as COMPLETED. */
  | 'completed'
  /** It ran and failed (or its result could not be stored); `onFailure` was applied. */
  | 'failed'
  /**
   * It ran, but its lease had lapsed and another invocation had taken the record over: the
   * record is theirs and nothing of ours was written. Frequent ones mean work outlives its lease.
   */
  | 'lease-lost'
  /** COMPLETED before: the stored result was returned, nothing ran. */
  | 'replayed'
  /** The same key earlier in this batch: it shares that record's result. */
  | 'in-batch-copy'
  /** Another invocation holds a live lease on it. */
  | 'in-progress'
  /** A FAILED record was replayed (policy `'fail'`). */
  | 'failed-before'
  /** The key was used before with another payload. */
  | 'mismatch'
  /** No key could be taken from it. */
  | 'no-key'
  /** FIFO: held back behind an earlier record of its message group. */
  | 'held-back'
  /** A store request for it failed after the SDK's retries. */
  | 'store-error'
  /** Middy's early timeout fired while it ran; its lease is kept. */
  | 'timed-out'

/**
 * Told to `onOutcome` once per unit of work, when its fate is known: for metrics
 * (replays, conflicts) and logs.
 *
 * @example
 * ```ts
 * idempotency({ store, onOutcome: ({ kind }) => metrics.increment(`idempotency.${kind}`) })
 * ```
 */
export interface UnitOutcome {
  kind: OutcomeKind
  /** The stored key, when one could be taken. */
  key?: string
  /** Batch modes: the record's `itemIdentifier` (an SQS messageId, a stream sequence number). */
  id?: string
  /** SQS batch mode: the record's messageId. */
  messageId?: string
  /** Why it did not complete, when it did not. */
  error?: unknown
}

/** The kind of outcome an error that kept a unit from running stands for. */
export const kindOfRefusal = (error: unknown): OutcomeKind => {
  if (error instanceof IdempotencyInProgressError) return 'in-progress'
  if (error instanceof IdempotencyFailedError) return 'failed-before'
  if (error instanceof IdempotencyPayloadMismatchError) return 'mismatch'
  if (error instanceof IdempotencyKeyError) return 'no-key'
  if (error instanceof IdempotencyHeldBackError) return 'held-back'
  if (error instanceof IdempotencyStoreError) return 'store-error'
  return 'failed'
}

/** Calls the hook; a hook that throws must not change what happens to the work, so it is only logged. */
export const reportOutcome = (onOutcome: ((outcome: UnitOutcome) => void) | undefined, logger: IdempotencyLogger, outcome: UnitOutcome): void => {
  if (onOutcome === undefined) return
  try {
    onOutcome(outcome)
  } catch (error) {
    logger.error({ message: 'idempotency: onOutcome threw; ignored', error })
  }
}
