import { expect } from '@jest/globals'
import fc from 'fast-check'
import type { StoredError } from '../../../../src/errors.js'
import type { ClaimRecord, IdempotencyStore } from '../../../../src/stores/store.js'
import { modelClaim, modelComplete, modelFail, modelRead, modelRelease, type ModelState } from './model.js'

/** The store under test; `read` is optional in the contract but both stores have it, and the comparison needs it. */
export interface Real {
  store: IdempotencyStore & Required<Pick<IdempotencyStore, 'read'>>
  /** Unique to the run: tokens are new across runs sharing one table, too. */
  prefix: string
}

type StoreCommand = fc.AsyncCommand<ModelState, Real>

export const OWNERS = 3
export const KEYS = 3

/** The whole stored state, through `read`, must be the model's after every command. */
const agree = async (m: ModelState, r: Real): Promise<void> => {
  expect(await r.store.read(m.keys)).toStrictEqual(modelRead(m, m.keys))
}

/**
 * Who calls complete, fail or release: an owner by number, or `'holder'`, the owner whose
 * claim stands now (so that successful settles, and settles of settled records, are frequent
 * enough to be explored and not only refused ones).
 */
export type Caller = number | 'holder'

/** The caller's token: the one of its last successful claim of the key, or one never issued. */
const tokenOf = (m: ModelState, caller: Caller, key: string): string => {
  if (caller === 'holder') return m.records.get(key)?.leaseToken ?? 'never-claimed-by-anyone'
  return m.tokens[caller]?.get(key) ?? `never-claimed-by-${caller}`
}

const callerName = (caller: Caller): string => caller === 'holder' ? 'holder' : `owner ${caller}`

/** Which parts of the contract a run explores. */
export interface Scope {
  /**
   * Whether the holder of a FAILED record may complete it with the same token (the contract
   * says yes, and COMPLETED then carries no error). The core never does this (each claim is
   * settled once); DynamoDBStore keeps the stale error there, so its runs leave it out
   * until that is fixed (see the report of this test file).
   */
  completeOverFailed: boolean
}

const seconds = (ms: number): number => Math.floor(ms / 1000)

class Claim implements StoreCommand {
  constructor (readonly owner: number, readonly keyIndex: number, readonly skewMs: number, readonly leaseMs: number,
    readonly expiryS: number, readonly withHash: boolean) {}

  check = (): boolean => true

  async run (m: ModelState, r: Real): Promise<void> {
    const key = m.keys[this.keyIndex] as string
    const nowMs = m.now + this.skewMs
    const record: ClaimRecord = {
      key,
      status: 'IN_PROGRESS',
      expiry: seconds(nowMs) + this.expiryS,
      inProgressExpiry: nowMs + this.leaseMs,
      leaseToken: `${r.prefix}-t${m.issued++}`,
      ...(this.withHash ? { payloadHash: `hash-${this.owner}` } : {})
    }
    const actual = await r.store.claim(record, nowMs)
    const expected = modelClaim(m, record, nowMs)
    expect(actual).toStrictEqual(expected)
    if (expected === undefined) m.tokens[this.owner]?.set(key, record.leaseToken)
    await agree(m, r)
  }

  toString = (): string =>
    `claim(owner ${this.owner}, k${this.keyIndex}, skew ${this.skewMs}ms, lease +${this.leaseMs}ms, expiry +${this.expiryS}s${this.withHash ? ', hash' : ''})`
}

class Complete implements StoreCommand {
  constructor (readonly owner: Caller, readonly keyIndex: number, readonly expiryS: number, readonly responseData: string | undefined,
    readonly scope: Scope) {}

  /** Out of scope: completing, with its own token, a record the caller already failed. */
  check = (m: Readonly<ModelState>): boolean => {
    if (this.scope.completeOverFailed) return true
    const key = m.keys[this.keyIndex] as string
    const record = m.records.get(key)
    return !(record?.status === 'FAILED' && record.leaseToken === tokenOf(m as ModelState, this.owner, key))
  }

  async run (m: ModelState, r: Real): Promise<void> {
    const key = m.keys[this.keyIndex] as string
    const token = tokenOf(m, this.owner, key)
    const outcome = { expiry: seconds(m.now) + this.expiryS, ...(this.responseData === undefined ? {} : { responseData: this.responseData }) }
    expect(await r.store.complete(key, token, outcome)).toBe(modelComplete(m, key, token, outcome))
    await agree(m, r)
  }

  toString = (): string => `complete(${callerName(this.owner)}, k${this.keyIndex}, expiry +${this.expiryS}s, ${JSON.stringify(this.responseData) ?? 'no response'})`
}

class Fail implements StoreCommand {
  constructor (readonly owner: Caller, readonly keyIndex: number, readonly expiryS: number, readonly error: StoredError) {}

  check = (): boolean => true

  async run (m: ModelState, r: Real): Promise<void> {
    const key = m.keys[this.keyIndex] as string
    const token = tokenOf(m, this.owner, key)
    const outcome = { expiry: seconds(m.now) + this.expiryS, error: this.error }
    expect(await r.store.fail(key, token, outcome)).toBe(modelFail(m, key, token, outcome))
    await agree(m, r)
  }

  toString = (): string => `fail(${callerName(this.owner)}, k${this.keyIndex}, expiry +${this.expiryS}s, ${JSON.stringify(this.error)})`
}

class Release implements StoreCommand {
  constructor (readonly owner: Caller, readonly keyIndex: number) {}

  check = (): boolean => true

  async run (m: ModelState, r: Real): Promise<void> {
    const key = m.keys[this.keyIndex] as string
    const token = tokenOf(m, this.owner, key)
    expect(await r.store.release(key, token)).toBe(modelRelease(m, key, token))
    await agree(m, r)
  }

  toString = (): string => `release(${callerName(this.owner)}, k${this.keyIndex})`
}

/**
 * A read of some distinct keys (one may be a key never written). Distinct, as the core
 * asks: a repeated key is a separate finding (DynamoDB refuses it; see the report).
 */
class Read implements StoreCommand {
  constructor (readonly keyIndices: number[]) {}

  check = (): boolean => true

  async run (m: ModelState, r: Real): Promise<void> {
    const keys = this.keyIndices.map((i) => m.keys[i] ?? `${r.prefix}#never-written`)
    expect(await r.store.read(keys)).toStrictEqual(modelRead(m, keys))
  }

  toString = (): string => `read(${this.keyIndices.map((i) => (i < KEYS ? `k${i}` : 'unknown')).join(', ')})`
}

class Advance implements StoreCommand {
  constructor (readonly ms: number) {}

  check = (): boolean => true

  async run (m: ModelState): Promise<void> {
    m.now += this.ms
  }

  toString = (): string => `advance(${this.ms}ms)`
}

/**
 * Moves the clock to one millisecond around the instant a record stops protecting its key:
 * for the lease, `inProgressExpiry` (ms); for the expiry, the first ms of the second after
 * `expiry` (s). Random steps alone would rarely land there, and that is where a store
 * comparing in the wrong unit, or with `<=`, is caught.
 */
class JumpToBoundary implements StoreCommand {
  constructor (readonly keyIndex: number, readonly attribute: 'lease' | 'expiry', readonly deltaMs: -1 | 0 | 1) {}

  #target (m: ModelState): number | undefined {
    const record = m.records.get(m.keys[this.keyIndex] as string)
    if (record === undefined) return undefined
    const edge = this.attribute === 'lease' ? record.inProgressExpiry : (record.expiry + 1) * 1000
    return edge === undefined ? undefined : edge + this.deltaMs
  }

  check = (m: Readonly<ModelState>): boolean => {
    const target = this.#target(m as ModelState)
    return target !== undefined && target > m.now
  }

  async run (m: ModelState): Promise<void> {
    m.now = this.#target(m) as number
  }

  toString = (): string => `jumpTo(k${this.keyIndex} ${this.attribute} ${this.deltaMs >= 0 ? '+' : ''}${this.deltaMs}ms)`
}

const owner = fc.integer({ min: 0, max: OWNERS - 1 })
const caller: fc.Arbitrary<Caller> = fc.oneof(fc.constant('holder' as const), owner)
const keyIndex = fc.integer({ min: 0, max: KEYS - 1 })
/** Expiry a few seconds either side of now, so expiry and lease often disagree about which lapses first. */
const expiryS = fc.integer({ min: -2, max: 4 })
const storedError = fc.record({
  name: fc.constantFrom('Error', 'TypeError', 'PaymentDeclined'),
  // An empty message is what `new Error()` stores.
  message: fc.oneof(fc.constant(''), fc.string({ maxLength: 12 }))
})
const responseData = fc.option(fc.oneof(fc.constant('null'), fc.constant('""'), fc.json({ maxDepth: 1 })), { nil: undefined })

const claim = fc.record({ owner, keyIndex, skew: fc.integer({ min: -1500, max: 1500 }), lease: fc.integer({ min: -1000, max: 4000 }), expiryS, withHash: fc.boolean() })
  .map(({ owner, keyIndex, skew, lease, expiryS, withHash }) => new Claim(owner, keyIndex, skew, lease, expiryS, withHash))

/** Every command of the contract, plus time passing, for several owners over a handful of keys. */
export const storeCommands = (scope: Scope) => [
  // Twice: fc.commands picks uniformly, and without records most other commands explore little.
  claim,
  claim,
  fc.tuple(caller, keyIndex, expiryS, responseData).map(([o, k, e, d]) => new Complete(o, k, e, d, scope)),
  fc.tuple(caller, keyIndex, expiryS, storedError).map(([o, k, e, error]) => new Fail(o, k, e, error)),
  fc.tuple(caller, keyIndex).map(([o, k]) => new Release(o, k)),
  fc.array(fc.integer({ min: 0, max: KEYS }), { minLength: 1, maxLength: KEYS + 2 }).map((keys) => new Read(keys)),
  fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 2500 }), fc.integer({ min: 1, max: 4 }).map((s) => s * 1000))
    .map((ms) => new Advance(ms)),
  fc.tuple(keyIndex, fc.constantFrom('lease' as const, 'expiry' as const), fc.constantFrom(-1 as const, 0 as const, 1 as const))
    .map(([k, attribute, delta]) => new JumpToBoundary(k, attribute, delta))
]

/** A fresh model for one run; the clock starts far in the future (so DynamoDB TTL never removes a record behind the model's back) at a random millisecond. */
export const initialModel = (prefix: string, startMs: number): ModelState => ({
  now: startMs,
  records: new Map(),
  tokens: Array.from({ length: OWNERS }, () => new Map<string, string>()),
  issued: 0,
  keys: Array.from({ length: KEYS }, (_, i) => `${prefix}#k${i}`)
})

// 2100-01-01T00:00:00Z: every expiry is then decades ahead of the real clock DynamoDB TTL uses.
export const FAR_FUTURE_MS = 4_102_444_800_000
