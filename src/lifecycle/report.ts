import {
  IdempotencyFailedError,
  IdempotencyHeldBackError,
  IdempotencyInProgressError,
  IdempotencyKeyError,
  IdempotencyPayloadMismatchError,
  IdempotencyStoreError
} from '../errors.js'
import type { IdempotencyLogger, OutcomeKind, OutcomeReport } from '../types.js'

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
export const reportOutcome = (onOutcome: ((outcome: OutcomeReport) => void) | undefined, logger: IdempotencyLogger, outcome: OutcomeReport): void => {
  if (onOutcome === undefined) return
  try {
    onOutcome(outcome)
  } catch (error) {
    logger.error({ message: 'idempotency: onOutcome threw; ignored', error })
  }
}
