import type { RedisConnection } from './connection.js'

/**
 * What the operator functions (operator.ts) read of a store: its connection, its key prefix, and
 * the user's client (a cluster's primaries, an ioredis client's own keyPrefix).
 */
export interface RedisAccess { connection: RedisConnection, prefix: string, client: unknown }

// Kept beside the store, not in it: the operator functions reach a store's connection without
// the store class carrying their code into every handler's bundle.
const stores = new WeakMap<object, RedisAccess>()

export const registerRedis = (store: object, access: RedisAccess): void => { stores.set(store, access) }

export const redisAccessOf = (store: object): RedisAccess | undefined => stores.get(store)
