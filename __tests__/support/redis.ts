import { Redis } from 'ioredis'
import { createClient } from 'redis'

/** The Redis the global setup started (or the user's, through REDIS_URL). */
export const redisUrl = (): string => {
  const url = process.env.REDIS_URL
  if (url === undefined || url === '') throw new Error('REDIS_URL is not set: integration tests need the global setup that starts redis-server')
  return url
}

let prefixes = 0
/** A key prefix no other test uses, so tests share one server without meeting. */
export const uniquePrefix = (what: string): string => `${what}-${process.pid}-${++prefixes}-${Math.random().toString(36).slice(2, 8)}:`

/** The client families RedisStore is tested with, each connected to the test server; `close` ends them all. */
export const redisClients = () => {
  const opened: Array<() => Promise<unknown>> = []
  return {
    nodeRedis: async () => {
      const client = await createClient({ url: redisUrl() }).connect()
      opened.push(async () => await client.quit())
      return client
    },
    ioredis: async () => {
      const client = new Redis(redisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 })
      await client.connect()
      opened.push(async () => await client.quit())
      return client
    },
    close: async () => { await Promise.all(opened.splice(0).map(async (close) => await close())) }
  }
}
