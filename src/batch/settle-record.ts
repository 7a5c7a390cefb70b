import { IdempotencyError, IdempotencyHeldBackError } from '../errors.js'
import { commitWithCompletion } from '../lifecycle/commit.js'
import type { Unit } from '../lifecycle/config.js'
import { deadlineWithin } from '../lifecycle/lease.js'
import { rejected } from '../lifecycle/outcome.js'
import { applyOnFailure, complete, releaseRegardlessOfPolicy, type Settlement } from '../lifecycle/settle.js'
import type { BatchState, RecordState } from './state.js'

/**
 * Writes what became of one claimed record the moment it is known (docs/architecture.md: the batch flow): a result
 * is completed (with its queued `transact` writes, in one transaction), a failure goes
 * through `onFailure`, and a record that was never attempted (held back, not started) is
 * released — never kept FAILED, since it never ran. Each record is settled once.
 */
export const settleRecord = async (batch: BatchState, state: RecordState, result: PromiseSettledResult<unknown>, writes: readonly unknown[] = []): Promise<void> => {
  if (state.phase === 'settling' || state.phase === 'settled' || state.outcome?.kind !== 'run') return
  state.phase = 'settling'
  const { config } = batch
  const unit = state.unit as Unit
  const hold = state.outcome
  const { leaseToken, unclaimed = false } = hold
  let settlement: Settlement
  try {
    if (result.status === 'fulfilled') {
      // Unclaimed (`effects: 'transact-only'`), the commit is the claim, writes or none.
      settlement = writes.length > 0 || unclaimed
        ? await commitWithCompletion(config, unit, hold, result.value, writes)
        : await complete(config, unit, leaseToken, result.value)
    } else if (result.reason instanceof IdempotencyHeldBackError) {
      await releaseRegardlessOfPolicy(config, unit, hold)
      settlement = { result, kind: 'held-back' }
    } else if (batch.timedOut || deadlineWithin(batch.context, batch.timeoutMarginMs)) {
      // Failed after Middy's timeout, or so close to the deadline that it most likely is one
      // (a socket cut, an aborted request; `timeoutMarginMs`): a request may be out whose effect
      // landed. Keep the lease (README: Timeouts): it lapses at the deadline.
      settlement = { result, kind: 'timed-out' }
    } else {
      await applyOnFailure(config, unit, hold, result.reason)
      settlement = { result, kind: 'failed' }
    }
  } catch (error) {
    // A bug of ours or a fault no path foresaw must not leave the record half-settled nor
    // escape into its neighbours: it keeps its lease (it lapses at the deadline) and fails.
    config.logger.error({ message: 'idempotency: could not settle the record; it keeps its lease', key: unit.key, error })
    settlement = { result: rejected(error), kind: 'store-error' }
  }
  state.result = settlement.result
  state.settledAs = settlement.kind
  state.phase = 'settled'
}

/** What a record answers: its own settled result, its original's for a copy, its refusal, or its stored replay. */
export const resultOf = (state: RecordState): PromiseSettledResult<unknown> => {
  const outcome = state.outcome
  switch (outcome?.kind) {
    case 'copy': return resultOf(outcome.of)
    case 'replay': return { status: 'fulfilled', value: outcome.response }
    case 'rejected': return rejected(outcome.error)
    case 'run': return state.result ?? rejected(new IdempotencyError(`${state.id} was claimed but had not settled when the batch was answered (timed out)`, { key: state.unit?.key }))
    default: return rejected(new IdempotencyError(`${state.id} was never claimed`))
  }
}
