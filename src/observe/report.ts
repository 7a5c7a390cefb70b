import {
  IdempotencyFailedError,
  IdempotencyHeldBackError,
  IdempotencyInProgressError,
  IdempotencyKeyError,
  IdempotencyPayloadMismatchError,
  IdempotencyStoreError
} from '../errors.js'
import { levelOf, logOutcome, type Log } from './log.js'
import type { OutcomeKind, OutcomeReport } from '../types.js'

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

/** Where outcomes go: the log, and the `onOutcome` option (a unit's lifecycle config is one). */
export interface Reporting { log: Log, onOutcome?: (outcome: OutcomeReport) => void }

/**
 * Whether an outcome of `kind` is read by anyone (the log at its level, or `onOutcome`): on a replayed
 * batch, mostly not.
 */
export const isReported = (config: Reporting, kind: OutcomeKind): boolean =>
  config.onOutcome !== undefined || config.log.writes(levelOf(kind))

/**
 * What became of a unit, once its fate is known: its one log line, then the `onOutcome` hook. A
 * hook that throws must not change what happens to the work, so it is only logged.
 */
export const reportOutcome = (config: Reporting, outcome: OutcomeReport): void => {
  logOutcome(config.log, outcome)
  if (config.onOutcome === undefined) return
  try {
    config.onOutcome(outcome)
  } catch (error) {
    config.log.error({ message: 'idempotency: onOutcome threw; ignored', error })
  }
}
