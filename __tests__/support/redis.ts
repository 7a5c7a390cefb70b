import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide'
import { Cluster, Redis } from 'ioredis'
import { createClient, createCluster } from 'redis'
import type { RedisClientLike } from '../../src/redis.js'

// The other versions and forks are loaded when a test asks for one (the contract suite): each
// costs up to a second and a half of a test file's start, and most files use none of them.
const redis4 = async () => await import('redis-4')
const redis5 = async () => await import('redis-5')
const ioredis6 = async () => await import('ioredis-6')
const iovalkey = async () => await import('iovalkey')

/** The Redis the global setup started (or the user's, through REDIS_URL). */
export const redisUrl = (): string => {
  const url = process.env.REDIS_URL
  if (url === undefined || url === '') throw new Error('REDIS_URL is not set: integration tests need the global setup that starts redis-server')
  return url
}

/** The nodes of the Redis Cluster the global setup started (or the user's, through REDIS_CLUSTER_NODES=host:port,…). */
export const clusterNodes = (): Array<{ host: string, port: number }> => {
  const nodes = process.env.REDIS_CLUSTER_NODES
  if (nodes === undefined || nodes === '') throw new Error('REDIS_CLUSTER_NODES is not set: integration tests need the global setup that starts a Redis Cluster')
  return nodes.split(',').map((node) => {
    const at = node.lastIndexOf(':')
    return { host: node.slice(0, at), port: Number(node.slice(at + 1)) }
  })
}

let prefixes = 0
/** A key prefix no other test uses, so tests share one server without meeting. */
export const uniquePrefix = (what: string): string => `${what}-${process.pid}-${++prefixes}-${Math.random().toString(36).slice(2, 8)}:`

// GLIDE logs every error reply it meets (a NOSCRIPT the store recovers from, too) on stdout.
Logger.setLoggerConfig('off')

/**
 * Each client family RedisStore is tested with, connected to the test server (`single`; or the
 * one at `url`) or to the test cluster (`cluster`); `close` ends every client opened.
 */
export const redisClients = (options: { url?: string } = {}) => {
  const url = (): string => options.url ?? redisUrl()
  const standalone = (): { host: string, port: number } => {
    const parsed = new URL(url())
    return { host: parsed.hostname, port: Number(parsed.port || 6379) }
  }
  const rootNodes = (): Array<{ url: string }> => clusterNodes().map(({ host, port }) => ({ url: `redis://${host}:${port}` }))
  const connected = async <T extends { connect: () => Promise<unknown> }>(client: T): Promise<T> => { await client.connect(); return client }
  const opened: Array<() => unknown> = []
  const keep = <T>(client: T, close: (client: T) => unknown): T => { opened.push(() => close(client)); return client }
  return {
    nodeRedis: async () => keep(await createClient({ url: url() }).connect(), async (c) => await c.quit()),
    nodeRedisResp3: async () => keep(await createClient({ url: url(), RESP: 3 }).connect(), async (c) => await c.quit()),
    nodeRedisCluster: async () => keep(await createCluster({ rootNodes: clusterNodes().map(({ host, port }) => ({ url: `redis://${host}:${port}` })) }).connect(), async (c) => await c.quit()),
    ioredis: async () => {
      const client = keep(new Redis(url(), { lazyConnect: true, maxRetriesPerRequest: 1 }), async (c) => await c.quit())
      await client.connect()
      return client
    },
    ioredisCluster: async () => {
      const client = keep(new Cluster(clusterNodes(), { lazyConnect: true }), async (c) => await c.quit())
      await client.connect()
      return client
    },
    glide: async () => keep(await GlideClient.createClient({ addresses: [standalone()], requestTimeout: 5000 }), (c) => { c.close() }),
    // The other versions and forks the store names (docs/redis.md), each alone and on the cluster; typed as the store takes them.
    // v4's connect() resolves nothing: the client is the one created.
    nodeRedis4: async (): Promise<RedisClientLike> => await connected(keep((await redis4()).createClient({ url: url() }), async (c) => await c.quit())),
    nodeRedis4Cluster: async (): Promise<RedisClientLike> => await connected(keep((await redis4()).createCluster({ rootNodes: rootNodes() }), async (c) => await c.quit())),
    nodeRedis5: async (): Promise<RedisClientLike> => keep(await (await redis5()).createClient({ url: url() }).connect(), async (c) => await c.quit()),
    nodeRedis5Cluster: async (): Promise<RedisClientLike> => keep(await (await redis5()).createCluster({ rootNodes: rootNodes() }).connect(), async (c) => await c.quit()),
    ioredis6: async (): Promise<RedisClientLike> => await connected(keep(new (await ioredis6()).Redis(url(), { lazyConnect: true, maxRetriesPerRequest: 1 }), async (c) => await c.quit())),
    ioredis6Cluster: async (): Promise<RedisClientLike> => await connected(keep(new (await ioredis6()).Cluster(clusterNodes(), { lazyConnect: true }), async (c) => await c.quit())),
    iovalkey: async (): Promise<RedisClientLike> => await connected(keep(new (await iovalkey()).Redis(url(), { lazyConnect: true, maxRetriesPerRequest: 1 }), async (c) => await c.quit())),
    iovalkeyCluster: async (): Promise<RedisClientLike> => await connected(keep(new (await iovalkey()).Cluster(clusterNodes(), { lazyConnect: true }), async (c) => await c.quit())),
    glideCluster: async () => keep(await GlideClusterClient.createClient({ addresses: clusterNodes(), requestTimeout: 5000 }), (c) => { c.close() }),
    close: async () => { await Promise.all(opened.splice(0).map(async (close) => await close())) }
  }
}

/** The families, by name, as the tests run them: one store test per family and topology. */
export type Family = Exclude<keyof ReturnType<typeof redisClients>, 'close'>
export const singleNodeFamilies: Family[] = ['nodeRedis', 'nodeRedisResp3', 'ioredis', 'glide']
export const clusterFamilies: Family[] = ['nodeRedisCluster', 'ioredisCluster', 'glideCluster']
/** node-redis v4 and v5, ioredis 6 and iovalkey, alone and on the cluster: the contract suite runs on each. */
export const otherVersionFamilies: Family[] = ['nodeRedis4', 'nodeRedis4Cluster', 'nodeRedis5', 'nodeRedis5Cluster', 'ioredis6', 'ioredis6Cluster', 'iovalkey', 'iovalkeyCluster']

/**
 * What the tests ask of a server besides the store: the expiry time of a key and SCRIPT FLUSH
 * on every node, on the single server or the cluster (node-redis, whichever family is tested).
 */
export const redisAdmin = (clients: ReturnType<typeof redisClients>, topology: 'single' | 'cluster') => {
  const single = topology === 'single' ? clients.nodeRedis() : undefined
  const cluster = topology === 'cluster' ? clients.nodeRedisCluster() : undefined
  return {
    /** Epoch ms at which `key` expires (PEXPIRETIME, Redis 7): -1 without an expiry, -2 without the key. */
    expireTime: async (key: string): Promise<number> => single !== undefined ? await (await single).pExpireTime(key) : await (await cluster!).pExpireTime(key),
    /** Forgets every cached script, as a restart or a failover does. */
    flushScripts: async (): Promise<void> => {
      if (single !== undefined) { await (await single).scriptFlush(); return }
      const c = await cluster!
      await Promise.all(c.masters.map(async (master) => await (await c.nodeClient(master)).scriptFlush()))
    },
    /** The value at `key` as Redis holds it (null when there is none). */
    value: async (key: string): Promise<string | null> => single !== undefined ? await (await single).get(key) : await (await cluster!).get(key)
  }
}

/**
 * A client of any family that counts what it is asked to send: `sent` gets each command's name
 * (`EVALSHA`, `MGET`…), through node-redis's `sendCommand`.
 */
export const countingClient = (client: { sendCommand: (args: string[]) => Promise<unknown> }): { client: RedisClientLike, sent: string[] } => {
  const sent: string[] = []
  return { sent, client: { sendCommand: async (args: string[]) => { sent.push(args[0] as string); return await client.sendCommand(args) } } }
}
