import type { IdempotencyStore } from '../../src/index.js'
import type { IdempotencyRecord } from '../../src/store.js'
import { RedisStore } from '../../src/redis.js'
import { freshTable } from './dynamodb.js'
import { redisClients, uniquePrefix, type Family } from './redis.js'

/**
 * A store the middleware's integration tests run on, against its real server: what the test
 * needs besides the store, in the same words for every store.
 */
export interface StoreUnderTest {
  store: IdempotencyStore
  /**
   * The store operations asked for (`claim`, `complete`, `fail`, `release`, `read`, `commit`),
   * in order: what a path costs, counted where every store is alike (a `read` is one bulk read,
   * however the store sends it).
   */
  sent: string[]
  /** Every record stored under `namespace` (the order is the store's, not the test's). */
  records: (namespace: string) => Promise<IdempotencyRecord[]>
  close: () => Promise<void>
}

const OPERATIONS = new Set(['claim', 'complete', 'fail', 'release', 'read', 'commit'])

/** `store` with every operation it is asked for noted in `sent`; everything else (limits, name) passes through. */
const counted = (store: IdempotencyStore, sent: string[]): IdempotencyStore => new Proxy(store, {
  get: (target, property, receiver) => {
    const value: unknown = Reflect.get(target, property, receiver)
    if (typeof property !== 'string' || !OPERATIONS.has(property) || typeof value !== 'function') return value
    return (...args: unknown[]) => { sent.push(property); return (value as (...a: unknown[]) => unknown).apply(target, args) }
  }
})

const dynamodb = async (): Promise<StoreUnderTest> => {
  const table = await freshTable()
  const sent: string[] = []
  return {
    store: counted(table.store, sent),
    sent,
    records: async (namespace) => {
      const keys = (await table.items()).map((item) => String(item.idempotencyKey)).filter((key) => key.startsWith(`${namespace}#`))
      return [...(await table.store.read(keys)).values()]
    },
    close: table.drop
  }
}

const redis = (family: Family) => async (): Promise<StoreUnderTest> => {
  const clients = redisClients()
  const admin = await clients.nodeRedis()
  const keyPrefix = uniquePrefix(`middleware-${family}`)
  const store = new RedisStore({ client: await clients[family](), keyPrefix })
  const sent: string[] = []
  return {
    store: counted(store, sent),
    sent,
    records: async (namespace) => {
      const keys = (await admin.keys(`${keyPrefix}${namespace}#*`)).map((key) => key.slice(keyPrefix.length))
      return [...(await store.read(keys)).values()]
    },
    close: clients.close
  }
}

/**
 * Every store the middleware is promised on, by name, for `describe.each`: DynamoDB Local, and
 * a redis-server through each client family users bring (node-redis, ioredis, Valkey GLIDE).
 */
export const integrationStores: Array<[string, () => Promise<StoreUnderTest>]> = [
  ['DynamoDBStore', dynamodb],
  ['RedisStore (node-redis)', redis('nodeRedis')],
  ['RedisStore (ioredis)', redis('ioredis')],
  ['RedisStore (Valkey GLIDE)', redis('glide')]
]
