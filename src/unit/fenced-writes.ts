import { randomUUID } from 'node:crypto'
import { IdempotencyResponseError } from '../errors.js'
import { asStoreError, toStoredError } from './stored-error.js'
import { withinDeadline } from './deadline.js'
import type { LifecycleConfig, Unit } from './config.js'
import { fulfilled, rejected } from './outcome.js'
import type { FailureDecision, OutcomeKind } from '../types.js'
import { serialiseResponse } from './stored-result.js'

/** How a unit that ran ends: what it reports, and what became of it (for `onOutcome`). */
export interface Settlement {
  result: PromiseSettledResult<unknown>
  kind: OutcomeKind
  /** For a unit that failed: what was done with its record (`delete`: released; `fail`: kept FAILED). */
  onFailure?: FailureDecision
}

/**
 * The handler succeeded: store its result as COMPLETED, fenced by our token.
 * The unit reports fulfilled with the result, or rejected when the result could not be
 * stored (the record then fails, never a silent success).
 */
export const complete = async (config: LifecycleConfig, unit: Unit, leaseToken: string, response: unknown): Promise<Settlement> => {
  const serialised = serialiseResponse(response, config.store.limits?.maxResponseBytes)
  if (!serialised.ok) {
    const error = new IdempotencyResponseError(unit.key, serialised.problem)
    await keepFailed(config, unit, { leaseToken }, error)
    return { result: rejected(error), kind: 'failed', onFailure: 'fail' }
  }
  const expiry = Math.floor(config.now() / 1000) + config.expiresAfterSeconds
  const outcome = serialised.json === undefined ? { expiry } : { expiry, responseData: serialised.json }
  try {
    // Given up at the deadline, the completion may still land (COMPLETED: a redelivery replays
    // it) or not (IN_PROGRESS under our lease: a redelivery waits for it to lapse, then runs
    // again, as after any store fault here). Either way the lease is kept, never released:
    // releasing would let a redelivery run the work again while the completion may still land.
    if (!await withinDeadline(config, 'complete', unit.key, async (bound) => await config.store.complete(unit.key, leaseToken, outcome, { ...bound, clockSkewMs: config.clockSkewMs }))) {
      // Logged once, as the unit's outcome.
      return { result: fulfilled(response), kind: 'lease-lost' }
    }
  } catch (error) {
    // The lease stays: a redelivery meets IN_PROGRESS until it lapses, then runs again.
    // Logged once, as the unit's outcome.
    return { result: rejected(asStoreError(error, 'complete', unit.key)), kind: 'store-error' }
  }
  config.cache?.remember({ key: unit.key, status: 'COMPLETED', ...outcome, ...(unit.payloadHash === undefined ? {} : { payloadHash: unit.payloadHash }) })
  return { result: fulfilled(response), kind: 'completed' }
}

/**
 * Our hold on a record: the lease token of our claim. `unclaimed` (`effects: 'transact-only'`):
 * nothing was written yet, the commit was to claim; the token is only the commit's.
 */
export interface Hold { leaseToken: string, unclaimed?: true }

/**
 * The work failed: apply the `onFailure` policy — release the record (it may be deleted) or
 * keep it FAILED — fenced by our token. Never throws: a store fault here is logged, and the
 * lease then simply lapses. Answers what was done, or undefined when nothing could be (the lease
 * was lost, or the store failed).
 */
export const applyOnFailure = async (config: LifecycleConfig, unit: Unit, hold: Hold, error: unknown): Promise<FailureDecision | undefined> => {
  const decision = decide(config, unit, error)
  return await settleFailure(config, unit, hold, error, decision) ? decision : undefined
}

/**
 * Release the record whatever `onFailure` says, so that a redelivery runs it: for work never
 * attempted (held back behind its ordering group, not started before the deadline), which
 * keeping FAILED would fail until its expiry without ever having run it; and for a commit
 * cancelled for a temporary reason, which a retry may pass.
 */
export const releaseRegardlessOfPolicy = async (config: LifecycleConfig, unit: Unit, hold: Hold): Promise<void> => {
  await settleFailure(config, unit, hold, undefined, 'delete')
}

/**
 * The work ran (or may have) but its outcome cannot be stored as COMPLETED: keep the record
 * FAILED whatever `onFailure` says, since running the work again could duplicate it.
 */
export const keepFailed = async (config: LifecycleConfig, unit: Unit, hold: Hold, error: unknown): Promise<void> => {
  await settleFailure(config, unit, hold, error, 'fail')
}

const decide = (config: LifecycleConfig, unit: Unit, error: unknown): FailureDecision => {
  const policy = config.onFailure
  if (typeof policy !== 'function') return policy
  try {
    const decision = policy(error, { attempt: unit.attempt, key: unit.key })
    if (decision === 'delete' || decision === 'fail') return decision
    config.log.error({ message: `idempotency: onFailure returned ${String(decision)}, not 'delete' or 'fail'; deleting`, key: unit.key })
  } catch (policyError) {
    config.log.error({ message: 'idempotency: onFailure threw; deleting', key: unit.key, error: policyError })
  }
  return 'delete'
}

/** Applies `decision` to the record, fenced by our token: whether the decision was carried out. */
const settleFailure = async (config: LifecycleConfig, unit: Unit, hold: Hold, error: unknown, decision: FailureDecision): Promise<boolean> => {
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
          expiry: Math.floor(config.now() / 1000) + config.expiresAfterSeconds,
          error: toStoredError(error)
        }, { ...bound, clockSkewMs: config.clockSkewMs }))
      : await withinDeadline(config, 'release', unit.key, async (bound) => await config.store.release(unit.key, leaseToken, bound))
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
      message: `idempotency: could not ${decision === 'fail' ? 'fail' : 'release'} the record; it keeps its lease until it lapses`,
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
      key: unit.key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + config.expiresAfterSeconds, inProgressExpiry: nowMs, leaseToken,
      ...(unit.payloadHash === undefined ? {} : { payloadHash: unit.payloadHash })
    }, nowMs - config.clockSkewMs, { ...bound, clockSkewMs: config.clockSkewMs }))
    // Somebody else's record stands: it is theirs, whatever it says.
    return standing === undefined || standing.leaseToken === leaseToken ? leaseToken : undefined
  } catch (storeError) {
    config.log.error({ message: 'idempotency: could not keep the record FAILED', key: unit.key, error: asStoreError(storeError, 'claim', unit.key) })
    return undefined
  }
}

/** Somebody claimed the key after our lease lapsed: their record is theirs, we write nothing. */
export const lostLease = (config: LifecycleConfig, unit: Unit, operation: string): void => {
  config.log.warn({ message: `idempotency: lease lost before ${operation}; the record now belongs to another invocation and was left alone`, key: unit.key })
}
