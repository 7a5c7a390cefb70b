import type { StoredError } from '../errors.js'

/**
 * The three states of a stored record (docs/architecture.md: the record's life).
 *
 * @example
 * ```ts
 * if (record.status === 'COMPLETED') return JSON.parse(record.responseData ?? 'null')
 * ```
 */
export type RecordStatus = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED'

/** Every record status, declared once: what a record read back, or an operator's filter, may say. */
export const RECORD_STATUSES: readonly RecordStatus[] = ['IN_PROGRESS', 'COMPLETED', 'FAILED']

/** Whether `value` is one of {@link RECORD_STATUSES}. */
export const isRecordStatus = (value: unknown): value is RecordStatus =>
  (RECORD_STATUSES as readonly unknown[]).includes(value)

/**
 * One stored idempotency record, in the store-neutral shape every store reads and writes.
 *
 * @example
 * ```ts
 * const record: IdempotencyRecord = {
 *   key: 'orders#9f86d0…', status: 'COMPLETED', expiry: 1767225600, responseData: '{"ok":true}'
 * }
 * ```
 */
export interface IdempotencyRecord {
  /** `namespace#sha256(...)`: never raw business data. */
  key: string
  status: RecordStatus
  /** Epoch seconds after which the record no longer protects (and DynamoDB TTL may delete it). */
  expiry: number
  /** Epoch milliseconds: end of the IN_PROGRESS owner's lease. */
  inProgressExpiry?: number
  /** Fencing token, new for every claim: only its holder may complete, fail or release. */
  leaseToken?: string
  payloadHash?: string
  /** COMPLETED only: the handler's result as JSON; absent when the result was `undefined`. */
  responseData?: string
  /** FAILED only. */
  error?: StoredError
}

/**
 * A claim to write: an IN_PROGRESS record with a fresh token and a lease.
 *
 * @example
 * ```ts
 * const claim: ClaimRecord = {
 *   key, status: 'IN_PROGRESS', expiry, inProgressExpiry: Date.now() + 30_000, leaseToken: randomUUID()
 * }
 * ```
 */
export type ClaimRecord = IdempotencyRecord & { status: 'IN_PROGRESS', inProgressExpiry: number, leaseToken: string }

/**
 * The store contract. A store is a few conditional writes; all the policy lives in
 * the record lifecycle. `DynamoDBStore` and `MemoryStore` implement it with the same
 * semantics; implement it yourself for another database.
 *
 * @example
 * ```ts
 * const store: IdempotencyStore = new MemoryStore()
 * const existing = await store.claim(record, Date.now())
 * if (existing === undefined) {
 *   await work()
 *   await store.complete(record.key, record.leaseToken, { expiry, responseData: '1' })
 * }
 * ```
 */
export interface IdempotencyStore<TWrite = any> {
  /**
   * What the store can hold; the lifecycle asks, never assumes a database's limits. Without
   * it, nothing is refused for size before the store is asked. [no limits]
   */
  readonly limits?: StoreLimits
  /**
   * Writes `record` if no record protects its key: none exists, or it expired
   * (`expiry < now` in seconds), or it is IN_PROGRESS with a lapsed lease
   * (`inProgressExpiry < now` in ms). Resolves `undefined` when written, otherwise
   * the record that stands in the way — in the same request, never a second read.
   */
  claim: (record: ClaimRecord, nowMs: number, options?: StoreCallOptions) => Promise<IdempotencyRecord | undefined>
  /** Marks the record COMPLETED if `leaseToken` still holds it. Resolves `false` when the lease was taken over. */
  complete: (
    key: string,
    leaseToken: string,
    outcome: { expiry: number, responseData?: string },
    options?: StoreCallOptions
  ) => Promise<boolean>
  /** Marks the record FAILED if `leaseToken` still holds it. Resolves `false` when the lease was taken over. */
  fail: (
    key: string,
    leaseToken: string,
    outcome: { expiry: number, error: StoredError },
    options?: StoreCallOptions
  ) => Promise<boolean>
  /** Deletes the record if `leaseToken` still holds it. Resolves `false` when the lease was taken over. */
  release: (key: string, leaseToken: string, options?: StoreCallOptions) => Promise<boolean>
  /**
   * Optional: strongly consistent read of many keys at once. Used before claiming
   * records that are probably duplicates (SQS redeliveries), since one read of up to
   * 100 keys costs less than 100 refused writes. Keys it does not return are claimed.
   */
  read?: (keys: readonly string[], options?: StoreCallOptions) => Promise<Map<string, IdempotencyRecord>>
  /**
   * Optional: applies `writes` and marks the record COMPLETED (fenced by `leaseToken`, and
   * only while it is IN_PROGRESS) all or nothing, in one transaction. A commit whose answer
   * was lost and is retried must not fail on its own completion. Without it, `transact`
   * fails the record with a clear error. With `claim`, the record was never claimed: the
   * completion is a put of the COMPLETED record on the claim's condition at `claim.nowMs`, and
   * a record in its way is returned as `taken`.
   */
  commit?: (
    key: string,
    leaseToken: string,
    outcome: CommitOutcome,
    writes: readonly TWrite[],
    claim?: { nowMs: number },
    options?: StoreCallOptions
  ) => Promise<CommitResult>
  /**
   * Optional, with `commit`: why `write` can never be part of a commit (not an entry of the
   * store's write type), or undefined. Asked where `transact` is called, so that the mistake
   * is named at its line.
   */
  checkWrite?: (write: unknown) => string | undefined
}

/**
 * What the lifecycle tells a store about one call.
 *
 * @example
 * ```ts
 * const done = await store.complete(key, leaseToken, { expiry },
 *   { clockSkewMs: 2000, signal: AbortSignal.timeout(2000) })
 * ```
 */
export interface StoreCallOptions {
  /**
   * Aborts when the invocation's deadline (less `timeoutMarginMs`) comes before the answer: the
   * lifecycle has given the call up by then, and a store that passes the signal on to its client
   * (DynamoDBStore, as the SDK's `abortSignal`) frees the connection the call holds. A store may
   * ignore it.
   */
  signal?: AbortSignal
  /**
   * The same object for every call of one invocation. A store that sends calls together
   * (DynamoDBStore's grouped writes) groups only those of one invocation, so that a request of
   * one invocation that never answers holds no other invocation's writes (Lambda Managed
   * Instances run several in one process). A store may ignore it.
   */
  invocation?: object
  /**
   * With a write that sets an expiry: the middleware's `clockSkewMs`. Claims judge records at
   * their clock less this, so a record protects that much longer than its `expiry`. A store that
   * deletes records itself at expiry (Redis key expiry) must keep them at least this long past
   * it; a store that only compares `expiry` (DynamoDB, whose TTL deletes days late) can ignore
   * it. [0]
   */
  clockSkewMs?: number
}

/**
 * What a store can hold and do at once.
 *
 * @example
 * ```ts
 * const limits: StoreLimits = {
 *   maxResponseBytes: 398 * 1024,
 *   maxReadKeys: 100,
 *   transaction: { maxWrites: 99, maxBytes: 4 * 1024 * 1024 }
 * }
 * ```
 */
export interface StoreLimits {
  /** The largest result (UTF-8 bytes of its JSON) a COMPLETED record can keep; a larger one fails its unit of work. */
  maxResponseBytes: number
  /** How many keys one `read` takes; the lifecycle reads a larger batch in slices. */
  maxReadKeys: number
  /** With `commit`: how many writes (beside the completion) and how many bytes of them one commit holds. */
  transaction?: { maxWrites: number, maxBytes: number }
  /**
   * How many requests the store takes at once with profit, the middleware's `maxStoreRequests`
   * when that option is not set: an SDK's socket pool, or, for a client that pipelines everything
   * over one connection, as many as a batch holds. [50]
   */
  maxStoreRequests?: number
}

/**
 * The COMPLETED record a commit writes. `payloadHash` only matters to an unclaimed commit, which
 * writes the whole record.
 *
 * @example
 * ```ts
 * await store.commit?.(key, leaseToken, { expiry, responseData: JSON.stringify(result) }, writes)
 * ```
 */
export interface CommitOutcome { expiry: number, responseData?: string, payloadHash?: string }

/**
 * What became of a commit: applied, refused by our fence (lease lost), or refused by one of the writes.
 *
 * @example
 * ```ts
 * const result = await store.commit?.(key, leaseToken, outcome, writes)
 * if (result?.status === 'refused') console.log(result.entry, result.code)
 * ```
 */
export type CommitResult =
  | { status: 'committed' }
  | { status: 'lease-lost' }
  /** Unclaimed commit only: a record protects the key (another invocation committed first); nothing was applied. */
  | { status: 'taken', record: IdempotencyRecord }
  /**
   * Refused before anything was applied: by one of the writes (`entry`), as invalid, or for want
   * of capacity. `reason`, the store's judgement: `condition`, one of the user's conditions
   * failed (`onFailure` applies); `invalid`, the commit can never be stored as it is (the record
   * is kept FAILED, since its work may have had other effects); `temporary`, nothing is wrong
   * with the writes (another transaction on the same item, throttling), so the record is released
   * for a redelivery to try again.
   */
  | { status: 'refused', entry?: number, code: string, message: string, reason: 'condition' | 'invalid' | 'temporary' }

/**
 * True when `record` no longer stands in the way of a claim at `nowMs` (docs/architecture.md: the
 * record's life, one unit per attribute).
 */
export const isClaimable = (record: IdempotencyRecord, nowMs: number): boolean =>
  record.expiry < Math.floor(nowMs / 1000) ||
  (record.status === 'IN_PROGRESS' && (record.inProgressExpiry ?? 0) < nowMs)
