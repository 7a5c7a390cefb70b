import { createHash } from 'node:crypto'
import { IdempotencyConfigError, IdempotencyStoreError, type StoredError, type StoreOperation } from '../../errors.js'
import type { ClaimRecord, IdempotencyRecord, IdempotencyStore, RecordStatus, StoreLimits } from '../store.js'
import { senderFor, type RedisClientLike, type RedisCommandSender } from './clients.js'
import { CLAIM, COMPLETE, FAIL, RELEASE } from './scripts.js'

/**
 * Options of {@link RedisStore}.
 *
 * @example
 * ```ts
 * const options: RedisStoreOptions = { client: createClient({ url: process.env.REDIS_URL }), keyPrefix: 'idem:' }
 * ```
 */
export interface RedisStoreOptions {
  /** A connected node-redis, ioredis, iovalkey or Valkey GLIDE client (or cluster), or any `{ sendCommand(args) }`. Required. */
  client: RedisClientLike
  /** Put before every record's key (`namespace#sha256…`), for a database shared with other data. [none] */
  keyPrefix?: string
  /** The largest result a COMPLETED record keeps, in UTF-8 bytes of JSON: large values slow every Redis client sharing the server. [1 MiB] */
  maxResponseBytes?: number
}

const defaults = { keyPrefix: '', maxResponseBytes: 1024 * 1024 }

// Keys to read in one go: each is its own command (no cross-slot MGET in a cluster), all sent
// at once, so a batch of them is one round trip per connection.
const MAX_READ_KEYS = 1000

/** A script run by its SHA1 (`EVALSHA`), sent whole again when the server does not know it (`NOSCRIPT`: after a restart or SCRIPT FLUSH). */
interface Script { source: string, sha: string }
const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') })
const scripts = { claim: script(CLAIM), complete: script(COMPLETE), fail: script(FAIL), release: script(RELEASE) }

/**
 * The Redis store (Valkey, Redis OSS, ElastiCache): each operation is one Lua script, atomic
 * on the server. A claim writes only when no record protects the key and otherwise returns
 * the record in the way in the same round trip; completion, failure and release compare the
 * lease token, so a stale owner whose lease lapsed never overwrites nor deletes the new owner's
 * record. Every key expires just after its record stops protecting. Durability is the
 * server's: see the README on persistence. No `transact`: it needs a store with transactions.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 * import { RedisStore } from 'middy-idempotency/redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect()
 * const store = new RedisStore({ client })
 * ```
 */
export class RedisStore implements IdempotencyStore {
  readonly limits: StoreLimits
  readonly #sender: RedisCommandSender
  readonly #prefix: string

  constructor (options: RedisStoreOptions) {
    if (options === null || typeof options !== 'object') throw new IdempotencyConfigError('RedisStore: options are required ({ client })')
    const { keyPrefix = defaults.keyPrefix, maxResponseBytes = defaults.maxResponseBytes } = options
    if (typeof keyPrefix !== 'string') throw new IdempotencyConfigError('RedisStore: keyPrefix must be a string')
    if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes <= 0) throw new IdempotencyConfigError('RedisStore: maxResponseBytes must be a positive integer')
    this.#sender = senderFor(options.client)
    this.#prefix = keyPrefix
    this.limits = { maxResponseBytes, maxReadKeys: MAX_READ_KEYS }
  }

  async claim (record: ClaimRecord, nowMs: number): Promise<IdempotencyRecord | undefined> {
    const reply = await this.#run('claim', record.key, scripts.claim, [
      String(nowMs), record.leaseToken, String(record.expiry), String(record.inProgressExpiry), record.payloadHash ?? '', expireAt(record.expiry)
    ])
    if (reply === null || reply === undefined) return undefined
    return recordOf(record.key, reply, 'claim')
  }

  async complete (key: string, leaseToken: string, outcome: { expiry: number, responseData?: string }): Promise<boolean> {
    const data = outcome.responseData
    return await this.#run('complete', key, scripts.complete, [leaseToken, String(outcome.expiry), data === undefined ? '0' : '1', data ?? '', expireAt(outcome.expiry)]) === 1
  }

  async fail (key: string, leaseToken: string, outcome: { expiry: number, error: StoredError }): Promise<boolean> {
    const { name, message, code } = outcome.error
    return await this.#run('fail', key, scripts.fail, [leaseToken, String(outcome.expiry), name, message, code === undefined ? '0' : '1', code ?? '', expireAt(outcome.expiry)]) === 1
  }

  async release (key: string, leaseToken: string): Promise<boolean> {
    return await this.#run('release', key, scripts.release, [leaseToken]) === 1
  }

  async read (keys: readonly string[]): Promise<Map<string, IdempotencyRecord>> {
    const unique = [...new Set(keys)]
    const found = new Map<string, IdempotencyRecord>()
    await Promise.all(unique.map(async (key) => {
      let reply: unknown
      try {
        reply = await this.#sender.send(['HGETALL', this.#prefix + key], this.#prefix + key)
      } catch (error) {
        throw storeError('read', key, error)
      }
      const record = recordOf(key, reply, 'read')
      if (record !== undefined) found.set(key, record)
    }))
    return found
  }

  async #run (operation: StoreOperation, key: string, { source, sha }: Script, args: string[]): Promise<unknown> {
    const redisKey = this.#prefix + key
    try {
      try {
        return await this.#sender.send(['EVALSHA', sha, '1', redisKey, ...args], redisKey)
      } catch (error) {
        if (!/NOSCRIPT/.test(String((error as Error)?.message ?? error))) throw error
        return await this.#sender.send(['EVAL', source, '1', redisKey, ...args], redisKey)
      }
    } catch (error) {
      throw storeError(operation, key, error)
    }
  }
}

/** The key expires a second after the record stops protecting (its `expiry`, in seconds). */
const expireAt = (expirySeconds: number): string => String((expirySeconds + 1) * 1000 + 1000)

const storeError = (operation: StoreOperation, key: string, error: unknown): IdempotencyStoreError =>
  new IdempotencyStoreError(operation, `${operation} of key ${key} on Redis failed: ${(error as Error)?.message ?? String(error)}`, { key, cause: error })

/** A record from the hash's fields (`HGETALL`'s flat list, or an object from a client that maps it); undefined when there is none. */
const recordOf = (key: string, reply: unknown, operation: StoreOperation): IdempotencyRecord | undefined => {
  const fields: Record<string, string> = {}
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) fields[String(reply[i])] = String(reply[i + 1])
  } else if (reply !== null && typeof reply === 'object') {
    for (const [name, value] of Object.entries(reply)) fields[name] = String(value)
  }
  if (fields.s === undefined) {
    if (Object.keys(fields).length === 0) return undefined
    throw new IdempotencyStoreError(operation, `the record of key ${key} on Redis has no status`, { key })
  }
  const record: IdempotencyRecord = { key, status: fields.s as RecordStatus, expiry: Number(fields.e) }
  if (fields.l !== undefined) record.inProgressExpiry = Number(fields.l)
  if (fields.t !== undefined) record.leaseToken = fields.t
  if (fields.p !== undefined) record.payloadHash = fields.p
  if (fields.d !== undefined) record.responseData = fields.d
  if (fields.en !== undefined) record.error = { name: fields.en, message: fields.em ?? '', ...(fields.ec === undefined ? {} : { code: fields.ec }) }
  return record
}
