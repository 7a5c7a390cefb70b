import { randomUUID } from 'node:crypto'
import { KEPT_FAILED_SECONDS } from '../defaults.js'
import { IdempotencyHeldBackError } from '../errors.js'
import type { FailureDecision } from '../types.js'
import { commitWithCompletion, complete, type Refused } from './completion.js'
import { transactRefusal } from './completion.js'
import type { LifecycleConfig } from './config.js'
import type { Unit } from '../keys/prepare.js'
import { withinDeadline } from './deadline.js'
import { rejected, type Hold, type Settlement } from './outcome.js'
import { asStoreError, toStoredError } from './stored-error.js'

/** What the caller knows of the unit's end besides its result. */
export interface SettleContext {
  /** The `transact` writes the work queued; applied only with a fulfilled result. */
  writes?: readonly unknown[]
  /**
   * The work failed at or near the invocation's deadline (Middy's timeout fired, or a failure
   * within `timeoutMarginMs` of it): a request may be out whose effect landed.
   */
  timedOut: boolean
  /**
   * false: the work was never started (a record `perRecord` was not given), so it is released
   * whatever `onFailure` says.
   */
  attempted?: boolean
  /**
   * The work ran but what became of it cannot be read (a hand-written handler's answer): it is
   * kept FAILED whatever `onFailure` says, since running it again could duplicate it.
   */
  keepFailed?: true
}

/**
 * The one way a claimed unit of work (a whole event, or one record of a batch) is settled in the
 * store once its work has ended (docs/architecture.md: the record's life): a result is completed
 * (with its `transact` writes, in one transaction); work never attempted (held back, not started)
 * is released — never kept FAILED, since it never ran; a failure at the deadline keeps its lease,
 * which lapses with the invocation; work that ran but cannot be completed is kept FAILED; any
 * other failure goes through `onFailure`. Every write of a unit's end is made from here.
 * Never throws: a fault no path foresaw leaves the lease to lapse and fails the unit.
 */
export const settleUnit = async (
  config: LifecycleConfig, unit: Unit, hold: Hold, outcome: PromiseSettledResult<unknown>, how: SettleContext
): Promise<Settlement> => {
  const writes = how.writes ?? []
  // A `transact` refused during the work fails it, even when the work caught the error and returned.
  const refusal = outcome.status === 'fulfilled' ? transactRefusal(writes) : undefined
  const result = refusal === undefined ? outcome : rejected(refusal)
  try {
    if (result.status === 'fulfilled') {
      // Unclaimed (`effects: 'transact-only'`), the commit is the claim, writes or none.
      const stored = writes.length > 0 || hold.unclaimed === true
        ? await commitWithCompletion(config, unit, hold, result.value, writes)
        : await complete(config, unit, hold.leaseToken, result.value)
      return 'refused' in stored ? await endFailed(config, unit, hold, stored.refused, stored.then) : stored
    }
    if (how.keepFailed === true) return await endFailed(config, unit, hold, result.reason, 'keep-failed')
    if (result.reason instanceof IdempotencyHeldBackError || how.attempted === false) {
      await settleFailure(config, unit, hold, undefined, 'delete')
      return { result, kind: 'held-back' }
    }
    // docs/architecture.md: the batch flow, timeouts: a failure at the deadline may have taken
    // effect; the lease lapses with it.
    if (how.timedOut) return { result, kind: 'timed-out' }
    return await endFailed(config, unit, hold, result.reason, 'on-failure')
  } catch (error) {
    // A bug of ours or a fault no path foresaw must not leave the unit half-settled nor
    // escape into its neighbours: it keeps its lease (it lapses at the deadline) and fails.
    // Logged once, as the unit's outcome.
    return { result: rejected(error), kind: 'store-error' }
  }
}

/**
 * Writes the end of a unit that failed with `error`, fenced by our token, as `then` says:
 * `on-failure` applies the policy (release, or keep FAILED); `keep-failed` keeps it FAILED
 * whatever the policy, since the work ran and running it again could duplicate it; `release`
 * releases it whatever the policy (a commit cancelled for a temporary reason, which a retry may
 * pass). A store fault here is logged, and the lease then simply lapses.
 */
const endFailed = async (
  config: LifecycleConfig, unit: Unit, hold: Hold, error: unknown, then: Refused['then']
): Promise<Settlement> => {
  const result = rejected(error)
  if (then !== 'on-failure') {
    const decision = then === 'keep-failed' ? 'fail' : 'delete'
    await settleFailure(config, unit, hold, error, decision, Math.max(config.expiresAfterSeconds, KEPT_FAILED_SECONDS))
    return { result, kind: 'failed', onFailure: decision }
  }
  const decision = await decide(config, unit, error)
  const done = await settleFailure(config, unit, hold, error, decision)
  return { result, kind: 'failed', ...(done ? { onFailure: decision } : {}) }
}

const decide = async (config: LifecycleConfig, unit: Unit, error: unknown): Promise<FailureDecision> => {
  const policy = config.onFailure
  if (typeof policy !== 'function') return policy
  try {
    // An async policy (one that looks something up) is awaited.
    const decision = await policy(error, { attempt: unit.attempt, key: unit.key })
    if (decision === 'delete' || decision === 'fail') return decision
    const message = `idempotency: onFailure returned ${String(decision)}, not 'delete' or 'fail'; deleting`
    config.log.error({ message, key: unit.key })
  } catch (policyError) {
    config.log.error({ message: 'idempotency: onFailure threw; deleting', key: unit.key, error: policyError })
  }
  return 'delete'
}

/**
 * Applies `decision` to the record, fenced by our token: whether the decision was carried out. A
 * FAILED record protects for `protectsSeconds`: the user's window, or longer when the work may have
 * taken effect (KEPT_FAILED_SECONDS).
 */
const settleFailure = async (
  config: LifecycleConfig, unit: Unit, hold: Hold, error: unknown, decision: FailureDecision,
  protectsSeconds = config.expiresAfterSeconds
): Promise<boolean> => {
  let { leaseToken } = hold
  if (hold.unclaimed === true) {
    // Nothing of an unclaimed unit was written: there is nothing to release, and keeping it
    // FAILED takes a claim first (two requests, on this rare path only).
    if (decision === 'delete') return true
    const claimed = await claimToFail(config, unit)
    if (claimed === undefined) return false
    leaseToken = claimed
  }
  try {
    // Given up at the deadline, a fail or release may still land or not: either the record
    // ends as decided, or it stays IN_PROGRESS under our lease until it lapses. Both are safe
    // for work that failed; nothing else is written in their place.
    const held = decision === 'fail'
      ? await withinDeadline(config, 'fail', unit.key, async (bound) => await config.store.fail(unit.key, leaseToken, {
          expiry: Math.floor(config.now() / 1000) + protectsSeconds,
          error: toStoredError(error)
        }, { ...bound, clockSkewMs: config.clockSkewMs }))
      : await withinDeadline(config, 'release', unit.key,
          async (bound) => await config.store.release(unit.key, leaseToken, bound))
    if (held) return true
    // A delete whose answer was lost is retried by the SDK, and the retry meets no record: the
    // first attempt landed. Told apart from a record another invocation took over by one read,
    // on this rare path only.
    if (decision === 'delete' && await isGone(config, unit)) {
      const message = 'idempotency: the record was already gone (an earlier attempt of the delete landed): released'
      config.log.info({ message, key: unit.key })
      return true
    }
    lostLease(config, unit, decision === 'fail' ? 'fail' : 'release')
    return false
  } catch (storeError) {
    config.log.error({
      message: `idempotency: could not ${decision === 'fail' ? 'fail' : 'release'} the record; ` +
        'it keeps its lease until it lapses',
      key: unit.key,
      error: asStoreError(storeError, decision === 'fail' ? 'fail' : 'release', unit.key)
    })
    return false
  }
}

/**
 * True when no record stands under the unit's key, as a strongly consistent read tells it.
 * False when one stands, or when the store cannot say (no `read`, or the read failed).
 */
const isGone = async (config: LifecycleConfig, unit: Unit): Promise<boolean> => {
  const read = config.store.read?.bind(config.store)
  if (read === undefined) return false
  try {
    const found = await withinDeadline(config, 'read', unit.key, async (bound) => await read([unit.key], bound))
    return !found.has(unit.key)
  } catch {
    return false
  }
}

/** Claims an unclaimed unit's key so that it can be kept FAILED: its token, or undefined when another record stands. */
const claimToFail = async (config: LifecycleConfig, unit: Unit): Promise<string | undefined> => {
  const nowMs = config.now()
  const leaseToken = randomUUID()
  try {
    const standing = await withinDeadline(config, 'claim', unit.key, async (bound) => await config.store.claim({
      key: unit.key,
      status: 'IN_PROGRESS',
      expiry: Math.floor(nowMs / 1000) + config.expiresAfterSeconds,
      inProgressExpiry: nowMs,
      leaseToken,
      ...(unit.payloadHash === undefined ? {} : { payloadHash: unit.payloadHash })
    }, nowMs - config.clockSkewMs, { ...bound, clockSkewMs: config.clockSkewMs }))
    // Somebody else's record stands: it is theirs, whatever it says.
    return standing === undefined || standing.leaseToken === leaseToken ? leaseToken : undefined
  } catch (storeError) {
    const error = asStoreError(storeError, 'claim', unit.key)
    config.log.error({ message: 'idempotency: could not keep the record FAILED', key: unit.key, error })
    return undefined
  }
}

/** Somebody claimed the key after our lease lapsed: their record is theirs, we write nothing. */
const lostLease = (config: LifecycleConfig, unit: Unit, operation: string): void => {
  config.log.warn({
    message: `idempotency: lease lost before ${operation}; ` +
      'the record now belongs to another invocation and was left alone',
    key: unit.key
  })
}
