import {
  IdempotencyConfigError, IdempotencyLeaseLostError, IdempotencyResponseError, IdempotencyTransactError
} from '../errors.js'
import { asStoreError } from './stored-error.js'
import { withinDeadline } from './deadline.js'
import type { StoreLimits } from '../stores/store.js'
import type { LifecycleConfig } from './config.js'
import type { Unit } from '../keys/prepare.js'
import { judge } from './claim.js'
import { kindOfRefusal } from '../observe/log.js'
import { fulfilled, rejected, serialiseResponse, type Hold, type Settlement } from './outcome.js'

/*
 * How a unit's result is stored: `complete` marks the record COMPLETED; `commitWithCompletion`
 * does so in one transaction with the work's `transact` writes. Neither writes a failure: a
 * result that cannot be stored comes back `Refused`, and settle.ts writes what that calls for,
 * so that every failure write of a unit is made in one place. `queueTransact` (at the end) checks
 * each `transact` write where the work queues it.
 */

/**
 * A result that could not be stored, none of its writes applied; `then`: what becomes of the record.
 * `keep-failed`: the work may have had effects, kept FAILED whatever `onFailure` says; `on-failure`:
 * the policy applies; `release`: a temporary refusal, released for a retry.
 */
export interface Refused { refused: Error, then: 'keep-failed' | 'on-failure' | 'release' }

/** The store's class name, for errors that say which store cannot do what. */
export const storeName = (config: LifecycleConfig): string => {
  // A store's own `name` survives minification, which renames classes.
  const store = config.store as { name?: unknown, constructor?: { name?: string } }
  return typeof store.name === 'string' ? store.name : store.constructor?.name ?? 'this store'
}

/**
 * The error of `what` (transact, effects: 'transact-only') on a store that cannot commit: for a
 * DynamoDBStore (which commits once given `transactions`), it says what to write.
 */
export const needsCommit = (
  config: Pick<LifecycleConfig, 'store'>, what: string, consequence = ''
): IdempotencyConfigError => {
  const name = storeName(config as LifecycleConfig)
  const needs = `${what} needs a store that commits transactions with the record's completion`
  return new IdempotencyConfigError(needs + (name === 'DynamoDBStore'
    ? '; this DynamoDBStore was built without them: write new DynamoDBStore({ ..., transactions }), ' +
      "with import { DynamoDBStore, transactions } from 'middy-idempotency/dynamodb'"
    : ` (DynamoDBStore); ${name} does not${consequence}`))
}

/** Why `writes` cannot be one commit with the completion, by the store's own limits, or undefined. */
const tooMuch = (
  writes: readonly unknown[], limits: StoreLimits['transaction']
): { code: string, problem: string } | undefined => {
  if (limits === undefined) return undefined
  if (writes.length > limits.maxWrites) {
    const problem = `${writes.length} writes queued, more than the ${limits.maxWrites} that fit in one transaction ` +
      'with the completion'
    return { code: 'TooManyItems', problem }
  }
  // An estimate (a store sizes its items its own way), never far above it: binary values count
  // their bytes, not the four-per-byte of a Buffer's JSON, which would refuse what fits.
  const bytes = sizeOf(writes)
  if (bytes > limits.maxBytes) {
    const problem = `the writes are about ${bytes} bytes, more than the ${limits.maxBytes} one transaction holds`
    return { code: 'TooLarge', problem }
  }
  return undefined
}

/** About the bytes `value` takes as a store item: UTF-8 text, binary, digits, names, a little per element. */
const sizeOf = (value: unknown): number => {
  if (typeof value === 'string') return Buffer.byteLength(value)
  if (typeof value === 'number' || typeof value === 'bigint') return String(value).length
  if (value === null || typeof value !== 'object') return 1
  if (ArrayBuffer.isView(value)) return value.byteLength
  if (value instanceof ArrayBuffer) return value.byteLength
  const members = value instanceof Set || Array.isArray(value) ? [...value] : undefined
  if (members !== undefined) return members.reduce((sum: number, member) => sum + 1 + sizeOf(member), 3)
  return Object.entries(value).reduce((sum, [name, member]) => sum + Buffer.byteLength(name) + 1 + sizeOf(member), 3)
}

/**
 * The handler succeeded: store its result as COMPLETED, fenced by our token. A result that cannot
 * be stored is refused (the record then fails, never a silent success).
 */
export const complete = async (
  config: LifecycleConfig, unit: Unit, leaseToken: string, response: unknown
): Promise<Settlement | Refused> => {
  const serialised = serialiseResponse(response, config.store.limits?.maxResponseBytes)
  // The work ran: it may have had effects, so it is kept FAILED rather than run again.
  if (!serialised.ok) {
    return { refused: new IdempotencyResponseError(unit.key, serialised.problem), then: 'keep-failed' }
  }
  const expiry = Math.floor(config.now() / 1000) + config.expiresAfterSeconds
  const outcome = serialised.json === undefined ? { expiry } : { expiry, responseData: serialised.json }
  try {
    // Given up at the deadline, the completion may still land (COMPLETED: a redelivery replays
    // it) or not (IN_PROGRESS under our lease: a redelivery waits for it to lapse, then runs
    // again, as after any store fault here). Either way the lease is kept, never released:
    // releasing would let a redelivery run the work again while the completion may still land.
    const completed = await withinDeadline(config, 'complete', unit.key, async (bound) =>
      await config.store.complete(unit.key, leaseToken, outcome, { ...bound, clockSkewMs: config.clockSkewMs }))
    if (!completed) {
      // Logged once, as the unit's outcome.
      return { result: fulfilled(response), kind: 'lease-lost' }
    }
  } catch (error) {
    // The lease stays: a redelivery meets IN_PROGRESS until it lapses, then runs again.
    // Logged once, as the unit's outcome.
    return { result: rejected(asStoreError(error, 'complete', unit.key)), kind: 'store-error' }
  }
  remember(config, unit, outcome)
  return { result: fulfilled(response), kind: 'completed' }
}

/**
 * The work succeeded and its effects are `writes`: apply them and mark the record COMPLETED
 * in one transaction (docs/architecture.md: transact). Refused by one of the writes: nothing applied, the record
 * fails with an `IdempotencyTransactError` through `onFailure`. Refused by our fence: nothing
 * applied, reported failed as a lost lease (the new owner's result replays later).
 */
export const commitWithCompletion = async (
  config: LifecycleConfig, unit: Unit, hold: Hold, response: unknown, writes: readonly unknown[]
): Promise<Settlement | Refused> => {
  const { leaseToken, unclaimed = false } = hold
  /**
   * None of the writes was applied. `keep`: the work cannot be completed as it is (its result
   * or its writes cannot be stored), and it may have had effects outside `transact`, so the
   * record is kept FAILED, as `complete` does; otherwise `onFailure` applies. Unclaimed
   * (`effects: 'transact-only'`), there were no other effects: the policy applies.
   */
  const refuse = (error: Error, keep = false): Refused =>
    ({ refused: error, then: keep && !unclaimed ? 'keep-failed' : 'on-failure' })
  const commit = config.store.commit?.bind(config.store)
  if (commit === undefined) return refuse(needsCommit(config, 'idempotency: transact'))
  const limit = tooMuch(writes, config.store.limits?.transaction)
  if (limit !== undefined) {
    const message = `transact for key ${unit.key}: ${limit.problem}; nothing was written`
    return refuse(new IdempotencyTransactError(message, { key: unit.key, code: limit.code }), true)
  }
  const serialised = serialiseResponse(response, config.store.limits?.maxResponseBytes)
  if (!serialised.ok) {
    const problem = `${serialised.problem}; none of its transact writes was applied`
    return refuse(new IdempotencyResponseError(unit.key, problem), true)
  }

  const nowMs = config.now()
  const expiry = Math.floor(nowMs / 1000) + config.expiresAfterSeconds
  const outcome = {
    expiry,
    ...(serialised.json === undefined ? {} : { responseData: serialised.json }),
    ...(unclaimed && unit.payloadHash !== undefined ? { payloadHash: unit.payloadHash } : {})
  }
  let committed
  try {
    // An unclaimed commit claims as it completes, on the claim's condition (with its skew allowance).
    const claim = unclaimed ? { nowMs: nowMs - config.clockSkewMs } : undefined
    committed = await withinDeadline(config, 'commit', unit.key, async (bound) =>
      await commit(unit.key, leaseToken, outcome, writes, claim, bound))
  } catch (error) {
    // Whether it landed is unknown (a store fault, or given up at the deadline: the transaction
    // may still be applied, all of it or none): the lease stays, so a redelivery meets either the
    // COMPLETED record or, once the lease lapses, runs again with nothing applied.
    // Logged once, as the unit's outcome.
    return { result: rejected(asStoreError(error, 'commit', unit.key)), kind: 'store-error' }
  }
  switch (committed.status) {
    case 'committed':
      remember(config, unit, outcome)
      return { result: fulfilled(response), kind: 'completed' }
    case 'lease-lost':
      return { result: rejected(new IdempotencyLeaseLostError(unit.key)), kind: 'lease-lost' }
    case 'taken': {
      // Another invocation committed this key first: nothing of ours was applied; its result is ours.
      const judged = judge(config, unit, committed.record)
      if (judged.kind === 'replay') return { result: fulfilled(judged.response), kind: 'replayed' }
      // judge never answers 'run': the record stands, and says why this unit cannot.
      const error = judged.kind === 'rejected' ? judged.error : new IdempotencyLeaseLostError(unit.key)
      return { result: rejected(error), kind: kindOfRefusal(error) }
    }
    case 'refused': {
      const which = committed.entry === undefined ? 'the transaction' : `transact entry ${committed.entry}`
      const message = `${which} was refused (${committed.code}): ${committed.message}; nothing was written`
      const error = new IdempotencyTransactError(message,
        { key: unit.key, code: committed.code, ...(committed.entry === undefined ? {} : { entry: committed.entry }) })
      // A write refused as it stands (a condition, an invalid entry): the work may have had
      // effects outside transact, so an invalid commit is kept FAILED as an unstorable result is.
      if (committed.reason !== 'temporary') return refuse(error, committed.reason === 'invalid')
      // Another transaction on the same item, or throttling: nothing is wrong with the work.
      // Released whatever `onFailure` says, so that a redelivery simply tries again.
      return { refused: error, then: 'release' }
    }
  }
}

/** A completed unit, remembered by this instance's local cache (when there is one) for its replays. */
const remember = (config: LifecycleConfig, unit: Unit, outcome: { expiry: number, responseData?: string }): void => {
  const hash = unit.payloadHash === undefined ? {} : { payloadHash: unit.payloadHash }
  config.cache?.remember({ key: unit.key, status: 'COMPLETED', ...outcome, ...hash })
}

// The first refusal of each queue: work that catches what `transact` threw must not complete without its writes.
const refusals = new WeakMap<readonly unknown[], Error>()

/** The error a `transact` into `writes` was refused with, if one was: the unit fails with it. */
export const transactRefusal = (writes: readonly unknown[]): Error | undefined => refusals.get(writes)

/**
 * A `transact` that queues into `writes`, checking each entry by the store's rules and limits so that
 * the mistake is named at its line. `open()` is false once the work has returned.
 */
export const queueTransact = (
  config: LifecycleConfig,
  key: string | undefined,
  writes: unknown[],
  open: () => boolean
) => (...items: unknown[]): void => {
  if (!open()) throw new IdempotencyConfigError('transact was called after the work had returned: nothing was queued')
  try {
    queue(config, key, writes, items)
  } catch (error) {
    if (!refusals.has(writes)) refusals.set(writes, error as Error)
    throw error
  }
}

const queue = (config: LifecycleConfig, key: string | undefined, writes: unknown[], items: unknown[]): void => {
  const { store } = config
  if (store.commit === undefined) {
    throw needsCommit(config, 'transact', ', so the writes would not be applied with it')
  }
  items.forEach((item, i) => {
    const problem = store.checkWrite?.(item)
    if (problem !== undefined) {
      throw new IdempotencyTransactError(
        `transact entry ${writes.length + i} is not an entry ${storeName(config)} can write: ${problem}`,
        { key, entry: writes.length + i, code: 'ValidationError' })
    }
  })
  const maxWrites = store.limits?.transaction?.maxWrites
  if (maxWrites !== undefined && writes.length + items.length > maxWrites) {
    throw new IdempotencyTransactError(
      `transact: ${writes.length + items.length} writes for one unit of work, ` +
      `more than the ${maxWrites} that fit in one transaction with its completion; nothing will be written`,
      { key, code: 'TooManyItems' })
  }
  writes.push(...items)
}
