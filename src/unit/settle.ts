import { IdempotencyHeldBackError } from '../errors.js'
import { commitWithCompletion } from './commit.js'
import { transactRefusal } from './transact-queue.js'
import type { LifecycleConfig, Unit } from './config.js'
import { rejected } from './outcome.js'
import { applyOnFailure, complete, releaseRegardlessOfPolicy, type Hold, type Settlement } from './fenced-writes.js'

/** What the caller knows of the unit's end besides its result. */
export interface SettleContext {
  /** The `transact` writes the work queued; applied only with a fulfilled result. */
  writes?: readonly unknown[]
  /**
   * The work failed at or near the invocation's deadline (Middy's timeout fired, or a failure
   * within `timeoutMarginMs` of it): a request may be out whose effect landed.
   */
  timedOut: boolean
  /** false: the work was never started (a record `perRecord` was not given), so it is released whatever `onFailure` says. */
  attempted?: boolean
}

/**
 * The one way a claimed unit of work (a whole event, or one record of a batch) is settled in the
 * store once its work has ended (docs/architecture.md: the record's life): a result is completed
 * (with its `transact` writes, in one transaction); work never attempted (held back, not started)
 * is released — never kept FAILED, since it never ran; a failure at the deadline keeps its lease,
 * which lapses with the invocation; any other failure goes through `onFailure`.
 * Never throws: a fault no path foresaw leaves the lease to lapse and fails the unit.
 */
export const settleUnit = async (config: LifecycleConfig, unit: Unit, hold: Hold, outcome: PromiseSettledResult<unknown>, how: SettleContext): Promise<Settlement> => {
  const writes = how.writes ?? []
  // A `transact` refused during the work fails it, even when the work caught the error and returned.
  const refusal = outcome.status === 'fulfilled' ? transactRefusal(writes) : undefined
  const result = refusal === undefined ? outcome : rejected(refusal)
  try {
    if (result.status === 'fulfilled') {
      // Unclaimed (`effects: 'transact-only'`), the commit is the claim, writes or none.
      return writes.length > 0 || hold.unclaimed === true
        ? await commitWithCompletion(config, unit, hold, result.value, writes)
        : await complete(config, unit, hold.leaseToken, result.value)
    }
    if (result.reason instanceof IdempotencyHeldBackError || how.attempted === false) {
      await releaseRegardlessOfPolicy(config, unit, hold)
      return { result, kind: 'held-back' }
    }
    // docs/architecture.md: the batch flow, timeouts: a failure at the deadline may have taken effect; the lease lapses with it.
    if (how.timedOut) return { result, kind: 'timed-out' }
    const done = await applyOnFailure(config, unit, hold, result.reason)
    return { result, kind: 'failed', ...(done === undefined ? {} : { onFailure: done }) }
  } catch (error) {
    // A bug of ours or a fault no path foresaw must not leave the unit half-settled nor
    // escape into its neighbours: it keeps its lease (it lapses at the deadline) and fails.
    // Logged once, as the unit's outcome.
    return { result: rejected(error), kind: 'store-error' }
  }
}
