import type { StoredError } from '../../../../src/errors.js'
import type { ClaimRecord, IdempotencyRecord } from '../../../../src/stores/store.js'

/**
 * A reference model of DESIGN §2, written from the design and not from either store:
 * a map of records, and the rules that decide each write. The stores under test must
 * agree with it on every return value and on every stored record.
 */
export interface ModelState {
  /** The virtual clock (epoch ms). It only moves forward; each claim may add its host's skew. */
  now: number
  records: Map<string, IdempotencyRecord>
  /** Per owner: key → the leaseToken of its last successful claim of that key (possibly stale). */
  tokens: Array<Map<string, string>>
  /** Tokens issued so far, to make each one new. */
  issued: number
  /** The keys of this run: a prefix unique to the run, so runs on one table never meet. */
  keys: string[]
}

/** A record protects its key unless it expired (seconds) or is IN_PROGRESS with a lapsed lease (milliseconds). */
export const protects = (record: IdempotencyRecord, nowMs: number): boolean => {
  const expired = record.expiry < Math.floor(nowMs / 1000)
  const leaseLapsed = record.status === 'IN_PROGRESS' && record.inProgressExpiry !== undefined && record.inProgressExpiry < nowMs
  return !expired && !leaseLapsed
}

/** What `claim` must answer: `undefined` (and the record is now ours) or the record in the way. */
export const modelClaim = (state: ModelState, record: ClaimRecord, nowMs: number): IdempotencyRecord | undefined => {
  const standing = state.records.get(record.key)
  if (standing !== undefined && protects(standing, nowMs)) return { ...standing }
  state.records.set(record.key, { ...record })
  return undefined
}

/** Only the holder of the stored token may settle; anyone else changes nothing. */
const holds = (state: ModelState, key: string, leaseToken: string): IdempotencyRecord | undefined => {
  const held = state.records.get(key)
  return held?.leaseToken === leaseToken ? held : undefined
}

/** COMPLETED keeps the claim's token, lease and hash; `responseData` only when given; never an error. */
export const modelComplete = (state: ModelState, key: string, leaseToken: string, outcome: { expiry: number, responseData?: string }): boolean => {
  const held = holds(state, key, leaseToken)
  if (held === undefined) return false
  const { error: _error, responseData: _data, ...kept } = held
  state.records.set(key, {
    ...kept,
    status: 'COMPLETED',
    expiry: outcome.expiry,
    ...(outcome.responseData === undefined ? {} : { responseData: outcome.responseData })
  })
  return true
}

/** FAILED keeps the claim's token, lease and hash, stores the error and never a response. */
export const modelFail = (state: ModelState, key: string, leaseToken: string, outcome: { expiry: number, error: StoredError }): boolean => {
  const held = holds(state, key, leaseToken)
  if (held === undefined) return false
  const { error: _error, responseData: _data, ...kept } = held
  state.records.set(key, { ...kept, status: 'FAILED', expiry: outcome.expiry, error: { ...outcome.error } })
  return true
}

/** Release deletes the record. */
export const modelRelease = (state: ModelState, key: string, leaseToken: string): boolean => {
  if (holds(state, key, leaseToken) === undefined) return false
  state.records.delete(key)
  return true
}

/** What `read` must return: every stored record of those keys, expired ones included (TTL is lazy). */
export const modelRead = (state: ModelState, keys: readonly string[]): Map<string, IdempotencyRecord> => {
  const found = new Map<string, IdempotencyRecord>()
  for (const key of keys) {
    const record = state.records.get(key)
    if (record !== undefined) found.set(key, { ...record })
  }
  return found
}
