import { IdempotencyConfigError } from '../../errors.js'
import { glideConnection, isGlide, type GlideClientLike } from './clients/glide.js'
import { ioredisConnection, isIORedis, type IORedisClient } from './clients/ioredis.js'
import {
  isNodeRedisCluster, nodeRedisClusterConnection, type NodeRedisClusterClient
} from './clients/node-redis-cluster.js'
import { sendCommandConnection, type SendCommandClient } from './clients/send-command.js'
import type { RedisConnection } from './connection.js'

/**
 * The clients RedisStore takes, as users already have them: a node-redis (`redis`,
 * `@redis/client` v4–v6) client or cluster, an ioredis (5, 6) or iovalkey `Redis` or `Cluster`,
 * a Valkey GLIDE 2.x `GlideClient` or `GlideClusterClient`, or any `{ sendCommand(args) }`.
 * Connected: RedisStore neither connects nor closes it.
 *
 * @example
 * ```ts
 * const client: RedisClientLike = { sendCommand: async (args) => await myConnection.command(args) }
 * ```
 */
export type RedisClientLike = SendCommandClient | NodeRedisClusterClient | IORedisClient | GlideClientLike

const KNOWN = 'give a connected node-redis client or cluster, an ioredis or iovalkey Redis or Cluster, ' +
  'a Valkey GLIDE client, or an object with sendCommand(args: string[]) => Promise<reply>'

/**
 * The adapter for `client`'s family, recognised by what only that family has, in an order
 * where no family is mistaken for another: GLIDE's `customCommand`; ioredis's `call` and
 * `pipeline` (its `sendCommand` takes a Command object); node-redis's cluster, whose
 * `sendCommand` takes the key first; then any `sendCommand(args)`.
 *
 * @example
 * ```ts
 * const connection = connect(await createClient({ url }).connect())
 * await connection.send('my-key', ['GET', 'my-key'])
 * ```
 */
export const connect = (client: unknown): RedisConnection => {
  if (client === null || typeof client !== 'object') {
    throw new IdempotencyConfigError(`RedisStore: client is required: ${KNOWN}`)
  }
  const c = client as Record<string, unknown>
  if (isGlide(c)) return glideConnection(client as GlideClientLike)
  if (isIORedis(c)) return ioredisConnection(client as IORedisClient)
  if (isNodeRedisCluster(c)) return nodeRedisClusterConnection(client as NodeRedisClusterClient)
  if (typeof c.sendCommand === 'function') return sendCommandConnection(client as SendCommandClient)
  throw new IdempotencyConfigError(`RedisStore: client is of no family RedisStore knows: ${KNOWN}`)
}
