/**
 * middy-idempotency/redis: the Redis store (Redis OSS, Valkey, ElastiCache). Its own entry
 * point: it loads no AWS SDK module and no Redis client (you give it yours).
 */
export { RedisStore } from './stores/redis/redis-store.js'
export type { RedisStoreOptions } from './stores/redis/store-options.js'
export type { RedisClientLike } from './stores/redis/connect.js'
export type { SendCommandClient } from './stores/redis/clients/send-command.js'
export type { NodeRedisClusterClient } from './stores/redis/clients/node-redis-cluster.js'
export type { IORedisClient, IORedisPipeline } from './stores/redis/clients/ioredis.js'
export type { GlideClientLike } from './stores/redis/clients/glide.js'
export {
  listRecords, inspectRecord, releaseRecord, type ListOptions, type RecordView, type ReleaseOptions, type ReleaseResult
} from './stores/redis/operator.js'
