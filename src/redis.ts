/**
 * middy-idempotency/redis: the Redis store (Valkey, Redis OSS, ElastiCache). Its own entry
 * point: it loads no AWS SDK module and no Redis client (you give it yours).
 */
export { RedisStore, type RedisStoreOptions } from './stores/redis/redis-store.js'
export type { RedisClientLike } from './stores/redis/clients.js'
