import { randomUUID } from 'node:crypto'
import {
  IdempotencyFailedError, IdempotencyInProgressError, IdempotencyPayloadMismatchError, IdempotencyStoreError
} from '../errors.js'
import { asStoreError } from './stored-error.js'
import { withinDeadline, type Lease } from './deadline.js'
import { isClaimable, type ClaimRecord, type IdempotencyRecord } from '../stores/store.js'
import type { CompletedCache, LifecycleConfig } from './config.js'
import type { Unit } from '../keys/prepare.js'
import { nthClaim, ownerToken } from './durable.js'
import { parseResponse, type ClaimDecision } from './outcome.js'

/**
 * Claims one unit of work: one conditional write that either makes us the owner
 * (IN_PROGRESS, a fresh fencing token, a lease) or returns the record in the way.
 * `standing` is that record when it was already read in bulk (see `IdempotencyStore.read`):
 * if it still protects the key, no write is made at all.
 */
export const claim = async (
  config: LifecycleConfig,
  unit: Unit,
  lease: Lease,
  standing?: IdempotencyRecord
): Promise<ClaimDecision> => {
  const leaseToken = tokenFor(unit, lease)
  const known = decideFromKnown(config, unit, lease, leaseToken, standing)
  if (known !== undefined) return known
  const cutoff = lease.nowMs - config.clockSkewMs

  const nowSeconds = Math.floor(lease.nowMs / 1000)
  const record: ClaimRecord = {
    key: unit.key,
    status: 'IN_PROGRESS',
    // TTL must never remove a record whose lease is still live, whatever expiresAfterSeconds is.
    expiry: Math.max(nowSeconds + config.expiresAfterSeconds, Math.ceil(lease.until / 1000) + 1),
    inProgressExpiry: lease.until,
    leaseToken
  }
  if (unit.payloadHash !== undefined) record.payloadHash = unit.payloadHash
  let existing: IdempotencyRecord | undefined
  try {
    // Given up at the deadline, the claim may still land: the record then stands IN_PROGRESS
    // under our token until the lease (this invocation's deadline) lapses, and a redelivery
    // claims it after that. The unit never ran, so nothing runs twice; it is reported failed.
    existing = await withinDeadline(config, 'claim', unit.key, async (bound) =>
      await config.store.claim(record, cutoff, { ...bound, clockSkewMs: config.clockSkewMs }))
  } catch (error) {
    return { kind: 'rejected', error: asStoreError(error, 'claim', unit.key) }
  }
  if (existing === undefined || carriesOn(existing, leaseToken, lease)) return { kind: 'run', leaseToken }
  return judge(config, unit, existing)
}

/**
 * Whether a record standing under our own token is ours to run on. Outside a durable execution
 * every claim has a new token, so only our own write meets it: it reached the table, its answer
 * was lost and the SDK retried it. In a durable execution the token is this call's in every
 * invocation (`ownerToken`): an IN_PROGRESS record is a replay of a call that had not finished,
 * which carries on as its owner. A finished one (COMPLETED, FAILED) is replayed as any other
 * record, so that paid work never runs twice in one execution; except in a batch
 * (`rerunFinished`), where every record the execution claimed is handed to the function again,
 * since the durable SDK identifies operations by the order they are called in, and a replay must
 * call the same ones (docs/lambda-modes.md).
 */
const carriesOn = (existing: IdempotencyRecord, leaseToken: string, lease: Lease): boolean =>
  existing.leaseToken === leaseToken && (existing.status === 'IN_PROGRESS' || lease.rerunFinished === true)

/**
 * `effects: 'transact-only'`: the unit runs without a claim, unless a record known to protect
 * its key already decides (the local cache, or the bulk read of redeliveries). Its commit
 * makes the claim, so concurrent duplicates may both run and exactly one commits.
 */
export const admit = (
  config: LifecycleConfig,
  unit: Unit,
  lease: Lease,
  standing?: IdempotencyRecord
): ClaimDecision => {
  const leaseToken = tokenFor(unit, lease)
  return decideFromKnown(config, unit, lease, leaseToken, standing) ?? { kind: 'run', leaseToken, unclaimed: true }
}

/**
 * A fresh token for every claim; in a durable execution, the token of this call: the
 * execution's own on this key, told apart from its other calls on the key in the same
 * invocation by their rank. Made once per claim: it counts the claim.
 */
const tokenFor = (unit: Unit, lease: Lease): string => {
  if (lease.owner === undefined) return randomUUID()
  return ownerToken(lease.owner, unit.key, lease.invocation === undefined ? 1 : nthClaim(lease.invocation, unit.key))
}

/**
 * What a record already known to protect the key decides, with no request: one the local
 * cache holds, or one read in bulk (`standing`). Undefined when none does.
 */
const decideFromKnown = (
  config: LifecycleConfig, unit: Unit, lease: Lease, leaseToken: string, standing?: IdempotencyRecord
): ClaimDecision | undefined => {
  // In a durable execution a record this call holds is decided by the claim, which knows its
  // token (the cache keeps none).
  if (lease.owner !== undefined) {
    const decidedByClaim = standing === undefined || carriesOn(standing, leaseToken, lease) ||
      isClaimable(standing, lease.nowMs - config.clockSkewMs)
    return decidedByClaim
      ? undefined
      : judge(config, unit, standing)
  }
  const cached = config.cache?.get(unit.key, lease.nowMs)
  if (cached !== undefined) return judge(config, unit, cached)
  // Another host's lease only counts as lapsed once it has been over for longer than the clock skew allowed.
  if (standing !== undefined && !isClaimable(standing, lease.nowMs - config.clockSkewMs)) {
    return judge(config, unit, standing)
  }
  return undefined
}

/** What a record that protects the key means for this unit (no write is ever made here). */
export const judge = (config: LifecycleConfig, unit: Unit, existing: IdempotencyRecord): ClaimDecision => {
  if (unit.payloadHash !== undefined && existing.payloadHash !== undefined &&
    unit.payloadHash !== existing.payloadHash) {
    return { kind: 'rejected', error: new IdempotencyPayloadMismatchError(unit.key) }
  }
  switch (existing.status) {
    case 'COMPLETED':
      try {
        const response = parseResponse(existing.responseData)
        config.cache?.remember(existing)
        return { kind: 'replay', response }
      } catch (error) {
        return {
          kind: 'rejected',
          error: new IdempotencyStoreError('read', `the stored response of key ${unit.key} is not valid JSON`,
            { key: unit.key, cause: error })
        }
      }
    case 'FAILED':
      return {
        kind: 'rejected',
        error: new IdempotencyFailedError(unit.key, existing.error ?? { name: 'Error', message: 'unknown' })
      }
    case 'IN_PROGRESS':
      return { kind: 'rejected', error: new IdempotencyInProgressError(unit.key, existing.inProgressExpiry) }
    default:
      return {
        kind: 'rejected',
        error: new IdempotencyStoreError('read', `key ${unit.key} has an unknown status ${String(existing.status)}`,
          { key: unit.key })
      }
  }
}

/**
 * COMPLETED records this container has seen, newest last, so that a redelivery to a
 * warm container costs no request. Safe because a COMPLETED record cannot be claimed
 * by anyone before its expiry (docs/architecture.md: the record's life), and entries are dropped at that expiry.
 * Shared by every invocation one middleware serves at once (Lambda Managed Instances): each method
 * runs to its end without awaiting, and a record still in progress is never held, so no
 * invocation can be answered from another's unfinished work.
 */
export class LocalCache implements CompletedCache {
  readonly #entries = new Map<string, IdempotencyRecord>()
  readonly #maxEntries: number

  constructor (maxEntries: number) {
    this.#maxEntries = maxEntries
  }

  get (key: string, nowMs: number): IdempotencyRecord | undefined {
    const record = this.#entries.get(key)
    if (record === undefined) return undefined
    this.#entries.delete(key)
    if (record.expiry < Math.floor(nowMs / 1000)) return undefined
    this.#entries.set(key, record)
    return record
  }

  remember (record: IdempotencyRecord): void {
    if (record.status !== 'COMPLETED') return
    this.#entries.delete(record.key)
    this.#entries.set(record.key, record)
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string)
  }
}
