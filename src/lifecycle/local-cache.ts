import type { IdempotencyRecord } from '../stores/store.js'

/**
 * COMPLETED records this container has seen, newest last, so that a redelivery to a
 * warm container costs no request. Safe because a COMPLETED record cannot be claimed
 * by anyone before its expiry (docs/architecture.md: the record's life), and entries are dropped at that expiry.
 * Shared by every invocation one middleware serves at once (Lambda Managed Instances): each method
 * runs to its end without awaiting, and a record still in progress is never held, so no
 * invocation can be answered from another's unfinished work.
 */
export class LocalCache {
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
