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
  const info = await connection.send(route, ['INFO', 'memory']).catch(() => '')
  const policy = /maxmemory_policy:(\S+)/.exec(String(info))?.[1]
  if (policy !== undefined && policy !== 'noeviction') {
    process.emitWarning(`RedisStore: maxmemory-policy ${policy} can evict records, and their work would run again: ` +
      'set noeviction (docs/redis.md#eviction)', { code: 'MIDDY_IDEMPOTENCY_EVICTION' })
  }
}
