import { IdempotencyConfigError, IdempotencyStoreError, type StoreOperation } from '../../errors.js'
import { inspectFrom, listFrom, releaseFrom, type ListOptions, type RecordView, type ReleaseOptions, type ReleaseResult } from '../operator/records.js'
import type { RecordPage, RecordTable } from '../operator/table.js'
import { redisAccessOf, type RedisAccess } from './access.js'
import { recordOf } from './record.js'
import type { RedisStore } from './redis-store.js'

export type { ListOptions, RecordView, ReleaseOptions, ReleaseResult }

/**
 * KEYS[1] the record; ARGV status, lease token ('' for none), and the time (epoch ms) its lease
 * must have ended before ('' when it need not). 1 and the key deleted when the record is still
 * what the operator read, else 0 and nothing is touched: one atomic step on the server, never an
 * unconditional DEL. The header is the store's (scripts.ts).
 */
const DELETE_IF = String.raw`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local s, e, l, t = string.match(v, '^([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)\n')
if s ~= ARGV[1] or t ~= ARGV[2] then return 0 end
if ARGV[3] ~= '' then
  local lease = tonumber(l)
  if not lease or lease >= tonumber(ARGV[3]) then return 0 end
end
redis.call('DEL', KEYS[1])
return 1
`

// Keys one SCAN step asks the server to look at: large enough that a big database is few round trips.
const SCAN_COUNT = 1000

/** `text` as a glob pattern matching it literally (SCAN's MATCH). */
const literal = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&')

/** The store's records as the operator functions see them (internal: for them and the tests). */
export const recordTable = (store: RedisStore): RecordTable => {
  const access = redisAccessOf(store)
  if (access === undefined) throw new IdempotencyConfigError('the operator functions of middy-idempotency/redis take a RedisStore')
  const { connection, prefix } = access
  const failed = (operation: StoreOperation, request: string, key: string | undefined, error: unknown): IdempotencyStoreError => {
    const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
    return new IdempotencyStoreError(operation, `${request}${key === undefined ? '' : ` of key ${prefix + key}`} on Redis (${connection.family}) failed: ${name}: ${message}`,
      { ...(key === undefined ? {} : { key }), cause: error })
  }
  return {
    where: `Redis${prefix === '' ? '' : ` (prefix ${prefix})`}`,
    pages: (filter) => scan(access, filter.pageSize, (error) => failed('read', 'SCAN', undefined, error)),
    get: async (key) => {
      let reply: unknown
      try {
        reply = await connection.send(prefix + key, ['GET', prefix + key])
      } catch (error) {
        throw failed('read', 'GET', key, error)
      }
      const record = recordOf(key, reply)
      if (typeof record === 'string') throw new IdempotencyStoreError('read', `${key} is not a middy-idempotency record: ${record} (Redis key ${prefix + key})`, { key })
      return record
    },
    deleteIf: async (key, expected) => {
      // A COMPLETED record only fenced by its token (release --completed).
      const completedByToken = expected.status === 'COMPLETED' && expected.leaseToken !== undefined
      if (expected.status !== 'IN_PROGRESS' && expected.status !== 'FAILED' && !completedByToken) {
        throw new IdempotencyConfigError(`only an IN_PROGRESS or FAILED record, or a COMPLETED one by its token, is ever deleted, not ${String(expected.status)}`)
      }
      try {
        const reply = await connection.send(prefix + key, ['EVAL', DELETE_IF, '1', prefix + key,
          expected.status, expected.leaseToken ?? '', expected.leaseLapsedBefore === undefined ? '' : String(expected.leaseLapsedBefore)])
        return reply === 1
      } catch (error) {
        throw failed('release', 'conditional delete', key, error)
      }
    }
  }
}

/**
 * The server's records under the store's prefix, one `SCAN` step at a time (its cursor), each
 * step's values read in one `MGET`. Values that are not records of ours (a key of the same
 * prefix written by something else) are skipped. One server only: a cluster's nodes are each
 * scanned with a client of their own.
 */
async function* scan ({ connection, prefix }: RedisAccess, pageSize: number | undefined, failed: (error: unknown) => Error): AsyncIterable<RecordPage> {
  if (!connection.oneServer) throw new IdempotencyConfigError(`listing records needs a client of one server; ${connection.family} is a cluster's: list each primary with a client of its own`)
  let cursor = '0'
  do {
    let keys: string[]
    let values: unknown
    try {
      const reply = await connection.send(prefix, ['SCAN', cursor, 'MATCH', `${literal(prefix)}*`, 'COUNT', String(pageSize ?? SCAN_COUNT)])
      if (!Array.isArray(reply) || reply.length !== 2 || !Array.isArray(reply[1])) throw new Error(`SCAN answered ${JSON.stringify(reply)}`)
      cursor = String(reply[0])
      keys = (reply[1] as unknown[]).map(String)
      values = keys.length === 0 ? [] : await connection.send(keys[0] as string, ['MGET', ...keys])
    } catch (error) {
      throw failed(error)
    }
    const page: RecordPage = { records: [], skipped: 0 }
    keys.forEach((redisKey, i) => {
      const record = recordOf(redisKey.slice(prefix.length), (values as unknown[])[i])
      if (typeof record === 'string') page.skipped++
      else if (record !== undefined) page.records.push(record)
    })
    yield page
  } while (cursor !== '0')
}

/**
 * Every record under the store's prefix (of one status, when asked), read by `SCAN` cursor.
 *
 * @example
 * ```ts
 * import { RedisStore, listRecords } from 'middy-idempotency/redis'
 *
 * const failed = await listRecords(new RedisStore({ client, keyPrefix: 'idem:' }), { status: 'FAILED' })
 * ```
 */
export const listRecords = async (store: RedisStore, options: ListOptions = {}): Promise<RecordView[]> => await listFrom(recordTable(store), options)

/**
 * One record: status, expiry, lease, payload hash, and a preview of its result or error; undefined when there is none.
 *
 * @example
 * ```ts
 * const record = await inspectRecord(store, 'orders-consumer#9f86d081884c7d65…')
 * ```
 */
export const inspectRecord = async (store: RedisStore, key: string, options: { now?: () => number, previewChars?: number } = {}): Promise<RecordView | undefined> =>
  await inspectFrom(recordTable(store), key, options)

/**
 * Deletes a FAILED record, or an IN_PROGRESS one whose lease lapsed (a live lease only with
 * `force`), so that the next delivery runs; a COMPLETED one only with `completed` (fenced on
 * its token, as the others), and never an item that is not
 * a record of this store (another library's, an application's row): that throws an
 * `IdempotencyStoreError` saying what it is missing. One script checks the token
 * and status read (and the lapsed lease) and deletes, atomically.
 *
 * @example
 * ```ts
 * const result = await releaseRecord(store, key, { force: true })
 * ```
 */
export const releaseRecord = async (store: RedisStore, key: string, options: ReleaseOptions = {}): Promise<ReleaseResult> =>
  await releaseFrom(recordTable(store), key, options)
