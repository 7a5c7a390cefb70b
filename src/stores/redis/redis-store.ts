import { IdempotencyConfigError, IdempotencyStoreError, type StoredError, type StoreOperation } from '../../errors.js'
import { errorText } from '../../error-text.js'
import { refuseUnknownOptions } from '../../unknown-options.js'
import type { ClaimRecord, IdempotencyRecord, IdempotencyStore, StoreLimits, StoreCallOptions } from '../store.js'
import { connect } from './connect.js'
import { isCrossSlot, isNoScript, type RedisConnection } from './connection.js'
import { completedBody, failedBody, fitsHeader, recordOf } from './record.js'
import { ScriptCallBatcher } from './batched.js'
import { registerRedis } from './access.js'
import { warnIfEvicting } from './eviction.js'
import { READ, SCRIPTS, type Script, type ScriptName } from './scripts.js'
import {
  CONCURRENCY, defaults, expireAt, MAX_READ_KEYS, OPTION_NAMES, type RedisStoreOptions
} from './store-options.js'

/**
 * The Redis store (Redis OSS 6.2+, Valkey, ElastiCache, MemoryDB): one string per record, each
 * operation one Lua script, atomic on the server. A claim writes only when no record protects
 * the key at the caller's `nowMs`, and otherwise returns the record in the way in the same
 * round trip; completion, failure and release compare the lease token, so a stale owner whose
 * lease lapsed never overwrites nor deletes the new owner's record. Every key expires just after
 * its record stops protecting. A bulk `read` is one `MGET` on one server, and a `GET` per key,
 * pipelined, one round trip per node, on a cluster; always from the primary. Durability
 * is the server's (docs/redis.md: persistence). No `commit`: `transact` needs a store whose
 * transactions hold your DynamoDB writes.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 * import { idempotency, perRecord } from 'middy-idempotency'
 * import { RedisStore } from 'middy-idempotency/redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect()
 * export const handler = middy()
 *   .use(idempotency({ store: new RedisStore({ client, keyPrefix: 'idem:' }) }))
 *   .handler(perRecord(charge))
 * ```
 */
export class RedisStore implements IdempotencyStore {
  /** Names the store in errors, whatever a minifier makes of the class's name. */
  readonly name = 'RedisStore'
  readonly limits: StoreLimits
  readonly #connection: RedisConnection
  readonly #prefix: string
  /** Whether a slice of reads goes in one command: one server, and it has not refused one (CROSSSLOT). */
  #readAtOnce: boolean
  /** On one server, the script calls of a burst go as one command. */
  readonly #batcher?: ScriptCallBatcher
  /** Whether the server's eviction policy was asked for (by this instance's first script call). */
  #asked = false

  constructor (options: RedisStoreOptions) {
    if (options === null || typeof options !== 'object') {
      throw new IdempotencyConfigError('RedisStore: options are required ({ client })')
    }
    refuseUnknownOptions('RedisStore', options, OPTION_NAMES)
    const { keyPrefix = defaults.keyPrefix, maxResponseBytes = defaults.maxResponseBytes } = options
    if (typeof keyPrefix !== 'string') throw new IdempotencyConfigError('RedisStore: keyPrefix must be a string')
    if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes <= 0) {
      throw new IdempotencyConfigError('RedisStore: maxResponseBytes must be a positive integer')
    }
    this.#connection = connect(options.client)
    this.#prefix = keyPrefix
    registerRedis(this, { connection: this.#connection, prefix: keyPrefix, client: options.client })
    this.#readAtOnce = this.#connection.oneServer
    if (this.#connection.oneServer) {
      this.#batcher = new ScriptCallBatcher({
        many: async (keys, args) => await this.#eval(SCRIPTS.many, keys, args),
        one: async (name, key, args) => await this.#eval(SCRIPTS[name], [key], args),
        refusesMany: isCrossSlot
      })
    }
    // One connection pipelines every request: a whole batch of claims is one round trip.
    this.limits = { maxResponseBytes, maxReadKeys: MAX_READ_KEYS, maxStoreRequests: CONCURRENCY }
  }

  async claim (
    record: ClaimRecord,
    nowMs: number,
    { clockSkewMs }: StoreCallOptions = {}
  ): Promise<IdempotencyRecord | undefined> {
    const { leaseToken, payloadHash = '' } = record
    if (leaseToken === '' || !fitsHeader(leaseToken) || !fitsHeader(payloadHash)) {
      this.#fault('claim', record.key,
        'an empty lease token, or a lease token or payload hash with a line break, cannot be stored')
    }
    const reply = await this.#run('claim', record.key, [
      String(nowMs),
      String(Math.floor(nowMs / 1000)),
      leaseToken,
      String(record.expiry),
      String(record.inProgressExpiry),
      payloadHash,
      String(expireAt(record.expiry, clockSkewMs))
    ])
    if (reply === null) return undefined
    // Never "claimed" on a reply we cannot read: that would run the work unprotected.
    return this.#record('claim', record.key, reply) ??
      this.#fault('claim', record.key, 'the claim was refused with no record in the way')
  }

  async complete (
    key: string,
    leaseToken: string,
    outcome: { expiry: number, responseData?: string },
    { clockSkewMs }: StoreCallOptions = {}
  ): Promise<boolean> {
    return await this.#fenced('complete', key, [
      leaseToken,
      String(outcome.expiry),
      completedBody(outcome.responseData),
      String(expireAt(outcome.expiry, clockSkewMs))
    ])
  }

  async fail (
    key: string,
    leaseToken: string,
    outcome: { expiry: number, error: StoredError },
    { clockSkewMs }: StoreCallOptions = {}
  ): Promise<boolean> {
    return await this.#fenced('fail', key, [
      leaseToken,
      String(outcome.expiry),
      failedBody(outcome.error),
      String(expireAt(outcome.expiry, clockSkewMs))
    ])
  }

  async release (key: string, leaseToken: string): Promise<boolean> {
    return await this.#fenced('release', key, [leaseToken])
  }

  async read (keys: readonly string[]): Promise<Map<string, IdempotencyRecord>> {
    const unique = [...new Set(keys)]
    if (unique.length === 0) return new Map()
    let replies = this.#readAtOnce ? await this.#readInOne(unique) : undefined
    try {
      replies ??= await this.#readEach(unique)
    } catch (error) {
      throw this.#error('read', undefined, error)
    }
    const found = new Map<string, IdempotencyRecord>()
    unique.forEach((key, i) => {
      const record = this.#record('read', key, replies[i])
      if (record !== undefined) found.set(key, record)
    })
    return found
  }

  /**
   * Every key's record in one command (an `MGET`, or `READ` for a client that may read from a
   * replica). Undefined when that fails, for the keys to be read one command each: for good when
   * the server is a cluster's (a single-endpoint client on a cluster-mode server, which refuses
   * keys of several slots in one command).
   */
  async #readInOne (keys: readonly string[]): Promise<unknown[] | undefined> {
    try {
      const redisKeys = keys.map((key) => this.#prefix + key)
      const reply = await this.#connection.send(redisKeys[0] as string,
        this.#connection.readsFromPrimary
          ? ['MGET', ...redisKeys]
          : ['EVAL', READ, String(redisKeys.length), ...redisKeys])
      if (Array.isArray(reply) && reply.length === keys.length) return reply
    } catch (error) {
      if (isCrossSlot(error)) this.#readAtOnce = false
    }
    return undefined
  }

  /** Each key's record, one command each, pipelined (one round trip per node): never a cross-slot command. */
  async #readEach (keys: readonly string[]): Promise<unknown[]> {
    if (this.#connection.readsFromPrimary) {
      return await this.#connection.sendEach(
        keys.map((key) => ({ key: this.#prefix + key, args: ['GET', this.#prefix + key] })))
    }
    const replies = await this.#connection.sendEach(
      keys.map((key) => ({ key: this.#prefix + key, args: ['EVAL', READ, '1', this.#prefix + key] })))
    // READ answers an array of one: its one key's value.
    return replies.map((reply) => Array.isArray(reply) && reply.length === 1 ? reply[0] as unknown : reply)
  }

  /** Runs a fenced script: 1 when the token held the record, 0 when the lease was taken over. */
  async #fenced (operation: ScriptName, key: string, args: string[]): Promise<boolean> {
    const reply = await this.#run(operation, key, args)
    if (reply === 1 || reply === 0) return reply === 1
    return this.#fault(operation, key, `the script answered ${JSON.stringify(reply)}, not 1 or 0`)
  }

  /**
   * Runs the script of `operation` about one key (with the others of its burst, on one server); a
   * failure becomes the store's error.
   */
  async #run (operation: ScriptName, key: string, args: string[]): Promise<unknown> {
    const redisKey = this.#prefix + key
    try {
      // The first call of the instance asks the server's eviction policy (and warns when it may
      // evict records), sent beside the call and awaited with it: no round trip of its own, and
      // the warning is out when the call returns. It never fails.
      const policy = this.#asked ? undefined : warnIfEvicting(this.#connection, redisKey)
      this.#asked = true
      const reply = this.#batcher === undefined
        ? await this.#eval(SCRIPTS[operation], [redisKey], args)
        : await this.#batcher.call(operation, redisKey, args)
      await policy
      return reply
    } catch (error) {
      throw this.#error(operation, key, error)
    }
  }

  /**
   * `EVALSHA`, and on NOSCRIPT (a restart, a failover, SCRIPT FLUSH) `EVAL` of the source, which caches it
   * again. Routed by the first key.
   */
  async #eval ({ source, sha }: Script, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const route = keys[0] as string
    try {
      return await this.#connection.send(route, ['EVALSHA', sha, String(keys.length), ...keys, ...args])
    } catch (error) {
      if (!isNoScript(error)) throw error
      return await this.#connection.send(route, ['EVAL', source, String(keys.length), ...keys, ...args])
    }
  }

  #record (operation: StoreOperation, key: string, reply: unknown): IdempotencyRecord | undefined {
    const record = recordOf(key, reply)
    return typeof record === 'string' ? this.#fault(operation, key, record) : record
  }

  #fault (operation: StoreOperation, key: string, problem: string): never {
    throw new IdempotencyStoreError(operation,
      `${operation} of key ${this.#prefix + key} on Redis (${this.#connection.family}): ${problem}`, { key })
  }

  #error (operation: StoreOperation, key: string | undefined, error: unknown): IdempotencyStoreError {
    const where = key === undefined ? '' : ` of key ${this.#prefix + key}`
    const text = errorText(error)
    // A server older than Redis 6.2 refuses SET's PXAT as a syntax error, which says nothing of why.
    const hint = /\bsyntax error\b/i.test(text) && operation !== 'read' && operation !== 'release'
      ? ' (RedisStore needs Redis OSS 6.2 or later, or Valkey: its writes use SET … PXAT)'
      : ''
    return new IdempotencyStoreError(operation,
      `${operation}${where} on Redis (${this.#connection.family}) failed: ${text}${hint}`,
      { ...(key === undefined ? {} : { key }), cause: error })
  }
}
