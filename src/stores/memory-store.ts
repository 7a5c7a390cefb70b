import type { StoredError } from '../errors.js'
import {
  isClaimable, type ClaimRecord, type IdempotencyRecord, type IdempotencyStore, type StoreLimits
} from './store.js'

/**
 * An in-process store with the same semantics as `DynamoDBStore`: conditional claim,
 * fenced completion, failure and release. For unit tests and local development —
 * not for production, where every Lambda container would have its own memory.
 *
 * @example
 * ```ts
 * import middy from '@middy/core'
 * import { idempotency, MemoryStore } from 'middy-idempotency'
 *
 * const store = new MemoryStore()
 * const handler = middy().use(idempotency({ store })).handler(async (event) => ({ ok: true }))
 * ```
 */
export class MemoryStore implements IdempotencyStore {
  /** Names the store in errors, whatever a minifier makes of the class's name. */
  readonly name = 'MemoryStore'
  /**
   * None by default; give the production store's (`new MemoryStore({ limits: store.limits })`) to meet its
   * refusals in tests.
   */
  readonly limits?: StoreLimits
  readonly #records = new Map<string, IdempotencyRecord>()

  constructor (options: { limits?: StoreLimits } = {}) {
    if (options.limits !== undefined) this.limits = options.limits
  }

  async claim (record: ClaimRecord, nowMs: number): Promise<IdempotencyRecord | undefined> {
    const existing = this.#records.get(record.key)
    if (existing !== undefined && !isClaimable(existing, nowMs)) return { ...existing }
    this.#records.set(record.key, { ...record })
  }

  async complete (
    key: string,
    leaseToken: string,
    outcome: { expiry: number, responseData?: string }
  ): Promise<boolean> {
    return this.#settle(key, leaseToken, (held) => {
      const { error, ...rest } = held
      const next: IdempotencyRecord = { ...rest, status: 'COMPLETED', expiry: outcome.expiry }
      if (outcome.responseData === undefined) delete next.responseData
      else next.responseData = outcome.responseData
      return next
    })
  }

  async fail (key: string, leaseToken: string, outcome: { expiry: number, error: StoredError }): Promise<boolean> {
    return this.#settle(key, leaseToken, (held) => {
      const { responseData, ...rest } = held
      return { ...rest, status: 'FAILED', expiry: outcome.expiry, error: { ...outcome.error } }
    })
  }

  async release (key: string, leaseToken: string): Promise<boolean> {
    return this.#settle(key, leaseToken, () => undefined)
  }

  async read (keys: readonly string[]): Promise<Map<string, IdempotencyRecord>> {
    const found = new Map<string, IdempotencyRecord>()
    for (const key of keys) {
      const record = this.#records.get(key)
      if (record !== undefined) found.set(key, { ...record })
    }
    return found
  }

  /** A copy of every stored record (expired ones included, as DynamoDB TTL is lazy). */
  records (): IdempotencyRecord[] {
    return [...this.#records.values()].map((record) => ({ ...record }))
  }

  /** Forgets everything. */
  clear (): void {
    this.#records.clear()
  }

  #settle (key: string, leaseToken: string, next: (held: IdempotencyRecord) => IdempotencyRecord | undefined): boolean {
    const held = this.#records.get(key)
    if (held?.leaseToken !== leaseToken) return false
    const record = next(held)
    if (record === undefined) this.#records.delete(key)
    else this.#records.set(key, record)
    return true
  }
}
