import { IdempotencyConfigError, IdempotencyStoreError, type StoreOperation } from '../../errors.js'
import {
  inspectFrom, listFrom, releaseFrom, type ListOptions, type RecordView, type ReleaseOptions, type ReleaseResult
} from '../operator/records.js'
import type { RecordPage, RecordTable } from '../operator/table.js'
import { redisAccessOf, type RedisAccess } from './access.js'
import type { RedisConnection } from './connection.js'
import { clientKeyPrefix, primariesOf, type Node } from './nodes.js'
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
  if (access === undefined) {
    throw new IdempotencyConfigError('the operator functions of middy-idempotency/redis take a RedisStore')
  }
  const { connection, prefix } = access
  const failed = (
    operation: StoreOperation,
    request: string,
    key: string | undefined,
    error: unknown
  ): IdempotencyStoreError => {
    const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
    const ofKey = key === undefined ? '' : ` of key ${prefix + key}`
    return new IdempotencyStoreError(operation,
      `${request}${ofKey} on Redis (${connection.family}) failed: ${name}: ${message}`,
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
      if (typeof record === 'string') {
        throw new IdempotencyStoreError('read',
          `${key} is not a middy-idempotency record: ${record} (Redis key ${prefix + key})`, { key })
      }
      return record
    },
    deleteIf: async (key, expected) => {
      // A COMPLETED record only fenced by its token (release --completed).
      const completedByToken = expected.status === 'COMPLETED' && expected.leaseToken !== undefined
      if (expected.status !== 'IN_PROGRESS' && expected.status !== 'FAILED' && !completedByToken) {
        throw new IdempotencyConfigError('only an IN_PROGRESS or FAILED record, or a COMPLETED one by its token, ' +
          `is ever deleted, not ${String(expected.status)}`)
      }
      try {
        const lapsedBefore = expected.leaseLapsedBefore === undefined ? '' : String(expected.leaseLapsedBefore)
        const reply = await connection.send(prefix + key,
          ['EVAL', DELETE_IF, '1', prefix + key, expected.status, expected.leaseToken ?? '', lapsedBefore])
        return reply === 1
      } catch (error) {
        throw failed('release', 'conditional delete', key, error)
      }
    }
  }
}

/**
 * Whether the one server `connection` reaches is a node of a Redis Cluster (`INFO cluster`):
 * its SCAN would walk that node's keys only. A server that refuses INFO is taken for what the
 * client says it is.
 */
const isClusterNode = async (connection: RedisConnection): Promise<boolean> => {
  try {
    return /^cluster_enabled:1\b/m.test(String(await connection.send('', ['INFO', 'cluster'])))
  } catch {
    return false
  }
}

/**
 * The server's records under the store's prefix, one `SCAN` step at a time (its cursor), on
 * each primary of a cluster in turn. A step's values are read in one `MGET` on one server, and
 * one `GET` each on a cluster (routed to its key's node; never a cross-slot command). SCAN
 * matches the keys the server holds: an ioredis client's own `keyPrefix` is part of them, and is
 * taken off again before the client, which adds it, reads them. A key SCAN returns again (it
 * may, while the keyspace's table is resized, or when a slot moves between nodes) is listed
 * once. Values that are not records of ours (a key of the same prefix written by something
 * else) are skipped.
 */
async function* scan (
  { connection, prefix, client }: RedisAccess, pageSize: number | undefined, failed: (error: unknown) => Error
): AsyncIterable<RecordPage> {
  const own = clientKeyPrefix(client)
  let nodes: Node[]
  try {
    nodes = connection.oneServer
      ? [{ name: 'server', send: async (args) => await connection.send('', args) }]
      : await primariesOf(client)
  } catch (error) {
    throw failed(error)
  }
  if (connection.oneServer && await isClusterNode(connection)) {
    throw new IdempotencyConfigError(
      `listing records: this ${connection.family} reaches one node of a Redis Cluster, ` +
      'whose SCAN sees that node\'s keys only: ' +
      'pass a cluster client (node-redis createCluster, ioredis Cluster, GlideClusterClient), ' +
      'whose every primary is scanned')
  }
  if (nodes.length === 0) {
    throw new IdempotencyConfigError(
      `listing records: no primary of the cluster is known to this ${connection.family}: connect it first`)
  }
  const seen = new Set<string>()
  for (const node of nodes) {
    let cursor = '0'
    do {
      let keys: string[]
      let values: unknown[]
      try {
        const reply = await node.send(
          ['SCAN', cursor, 'MATCH', `${literal(own + prefix)}*`, 'COUNT', String(pageSize ?? SCAN_COUNT)])
        if (!Array.isArray(reply) || reply.length !== 2 || !Array.isArray(reply[1])) {
          throw new Error(`SCAN answered ${JSON.stringify(reply)} on ${node.name}`)
        }
        cursor = String(reply[0])
        keys = (reply[1] as unknown[]).map((key) => String(key).slice(own.length)).filter((key) => !seen.has(key))
        for (const key of keys) seen.add(key)
        values = await read(connection, keys)
      } catch (error) {
        throw failed(error)
      }
      const page: RecordPage = { records: [], skipped: 0 }
      keys.forEach((redisKey, i) => {
        const record = recordOf(redisKey.slice(prefix.length), values[i])
        if (typeof record === 'string') page.skipped++
        else if (record !== undefined) page.records.push(record)
      })
      yield page
    } while (cursor !== '0')
  }
}

/**
 * The values under `keys` (as the client names them), in order: one MGET on one server, a GET each
 * (pipelined) on a cluster.
 */
const read = async (connection: RedisConnection, keys: readonly string[]): Promise<unknown[]> => {
  if (keys.length === 0) return []
  if (!connection.oneServer) return await connection.sendEach(keys.map((key) => ({ key, args: ['GET', key] })))
  const values = await connection.send(keys[0] as string, ['MGET', ...keys])
  if (!Array.isArray(values) || values.length !== keys.length) {
    throw new Error(`MGET of ${keys.length} keys answered ${JSON.stringify(values)}`)
  }
  return values
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
export const listRecords = async (store: RedisStore, options: ListOptions = {}): Promise<RecordView[]> =>
  await listFrom(recordTable(store), options)

/**
 * One record: status, expiry, lease, payload hash, and a preview of its result or error; undefined
 * when there is none.
 *
 * @example
 * ```ts
 * const record = await inspectRecord(store, 'orders-consumer#9f86d081884c7d65…')
 * ```
 */
export const inspectRecord = async (
  store: RedisStore,
  key: string,
  options: { now?: () => number, previewChars?: number } = {}
): Promise<RecordView | undefined> =>
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
export const releaseRecord = async (
  store: RedisStore,
  key: string,
  options: ReleaseOptions = {}
): Promise<ReleaseResult> =>
  await releaseFrom(recordTable(store), key, options)
