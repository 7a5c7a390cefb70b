import type { IdempotencyError } from '../errors.js'
import type { FailureDecision, OutcomeKind } from '../types.js'

/** What the claim decided for a unit of work (docs/architecture.md: the batch flow, claim). */
export type ClaimDecision =
  /**
   * Claimed: the handler runs it, holding `leaseToken`. `unclaimed` (`effects: 'transact-only'`):
   * nothing was written; the record is claimed and completed by its one commit.
   */
  | { kind: 'run', leaseToken: string, unclaimed?: true }
  /** COMPLETED before: its stored response is replayed. */
  | { kind: 'replay', response: unknown }
  /** Cannot run: in progress elsewhere, FAILED before, payload mismatch, no key, store fault, held back. */
  | { kind: 'rejected', error: IdempotencyError }

export const fulfilled = (value: unknown): PromiseFulfilledResult<unknown> => ({ status: 'fulfilled', value })
export const rejected = (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason })

/**
 * Our hold on a record: the lease token of our claim. `unclaimed` (`effects: 'transact-only'`):
 * nothing was written yet, the commit was to claim; the token is only the commit's.
 */
export interface Hold { leaseToken: string, unclaimed?: true }

/** How a unit that ran ends: what it reports, and what became of it (for `onOutcome`). */
export interface Settlement {
  result: PromiseSettledResult<unknown>
  kind: OutcomeKind
  /** For a unit that failed: what was done with its record (`delete`: released; `fail`: kept FAILED). */
  onFailure?: FailureDecision
}
