import type { RedisConnection } from './connection.js'

/**
 * Warns (`process.emitWarning`, code `MIDDY_IDEMPOTENCY_EVICTION`, as the DynamoDB TTL warning)
 * when the server's `maxmemory-policy` lets Redis evict our keys: every record has a TTL, so the
 * `volatile-*` policies may evict any of them, and the `allkeys-*` ones any key at all; an
 * evicted record lets its work run again. Only `noeviction` keeps them, refusing writes when
 * memory is full. Read from `INFO memory`, which ElastiCache allows where it refuses `CONFIG`
 * (https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/RestrictedCommands.html). A server
 * that refuses INFO (an ACL) gets no warning, and nothing fails.
 * https://redis.io/docs/latest/develop/reference/eviction/
 */
export const warnIfEvicting = async (connection: RedisConnection, route: string): Promise<void> => {
  let info: string
  try {
    info = String(await connection.send(route, ['INFO', 'memory']))
  } catch {
    return
  }
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1]
  if (policy === undefined || policy === 'noeviction') return
  const limit = /^maxmemory:(\d+)/m.exec(info)?.[1]
  process.emitWarning(`RedisStore: the server's maxmemory-policy is ${policy}: when its memory is full ` +
    `(maxmemory ${limit === '0' ? '0: no limit yet' : `${limit ?? '?'} bytes`}), Redis may evict idempotency records before they expire, ` +
    'and the work they protect runs again. Set maxmemory-policy to noeviction (docs/redis.md, Eviction).', { code: 'MIDDY_IDEMPOTENCY_EVICTION' })
}
