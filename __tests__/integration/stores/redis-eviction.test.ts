import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, jest, test } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { createClient } from 'redis'
import { startRedisCluster } from '../../../scripts/redis-cluster.mjs'
import { startRedisServer, type RedisServer } from '../../../scripts/redis-server.mjs'
import { RedisStore } from '../../../src/redis.js'
import { redisClients, type Family } from '../../support/redis.js'

/**
 * A server whose maxmemory-policy may evict keys with a TTL (every record has one) loses
 * records, and their work runs again: the store reads the policy once (INFO memory, which
 * ElastiCache allows where CONFIG is refused) and warns. A server and a cluster of their own:
 * the policy is the whole server's.
 */
let server: RedisServer
let cluster: Awaited<ReturnType<typeof startRedisCluster>>
let admins: Array<Awaited<ReturnType<typeof connect>>>
let clients: ReturnType<typeof redisClients>
const connect = async (url: string) => await createClient({ url }).connect()
const sharedCluster = process.env.REDIS_CLUSTER_NODES
beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedisServer(), startRedisCluster()])
  admins = await Promise.all([server.url, ...cluster.nodes.map((node) => `redis://${node}`)].map(connect))
  // Each family's client of this file's own server, and of its own cluster (read from the environment).
  process.env.REDIS_CLUSTER_NODES = cluster.nodes.join(',')
  clients = redisClients({ url: server.url })
})
afterAll(async () => {
  process.env.REDIS_CLUSTER_NODES = sharedCluster
  await clients.close()
  await Promise.all(admins.map(async (admin) => await admin.close()))
  await Promise.all([server.stop(), cluster.stop()])
})

/** Sets maxmemory-policy on the single server, or on every node of the cluster. */
const setPolicy = async (topology: 'single' | 'cluster', policy: string): Promise<void> => {
  await Promise.all((topology === 'single' ? admins.slice(0, 1) : admins.slice(1)).map(async (admin) => await admin.configSet('maxmemory-policy', policy)))
}

const spyWarnings = () => jest.spyOn(process, 'emitWarning').mockImplementation(() => {})
let warnings: ReturnType<typeof spyWarnings>
beforeEach(() => { warnings = spyWarnings() })
afterEach(() => { warnings.mockRestore() })
const evictionWarnings = (): string[] => warnings.mock.calls
  .filter(([, options]) => (options as { code?: string } | undefined)?.code === 'MIDDY_IDEMPOTENCY_EVICTION').map(([message]) => String(message))

const claim = async (store: RedisStore): Promise<void> => {
  const nowMs = Date.now()
  expect(await store.claim({ key: `ns#${randomUUID()}`, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + 60, inProgressExpiry: nowMs + 10_000, leaseToken: randomUUID() }, nowMs)).toBeUndefined()
}

const cases: Array<[Family, 'single' | 'cluster']> = [
  ['nodeRedis', 'single'], ['ioredis', 'single'], ['glide', 'single'],
  ['nodeRedisCluster', 'cluster'], ['ioredisCluster', 'cluster'], ['glideCluster', 'cluster']
]

describe.each(cases)('RedisStore with %s (%s)', (family, topology) => {
  const store = async (): Promise<RedisStore> => new RedisStore({ client: await clients[family](), keyPrefix: 'idem:' })

  test('volatile-lru: one warning per store, by its first call, naming the policy and noeviction', async () => {
    await setPolicy(topology, 'volatile-lru')
    const first = await store()
    await claim(first)
    await claim(first)
    expect(evictionWarnings()).toEqual([expect.stringMatching(/maxmemory-policy volatile-lru can evict records.*set noeviction/)])
  })

  test('noeviction: no warning', async () => {
    await setPolicy(topology, 'noeviction')
    await claim(await store())
    expect(evictionWarnings()).toEqual([])
  })
})

test('a server that refuses INFO (an ACL without it): no warning, and the store works', async () => {
  const [admin] = admins as [Awaited<ReturnType<typeof connect>>]
  await admin.configSet('maxmemory-policy', 'allkeys-lru')
  await admin.sendCommand(['ACL', 'SETUSER', 'no-info', 'on', '>secret', '~*', '&*', '+@all', '-info'])
  const limited = await createClient({ url: server.url, username: 'no-info', password: 'secret' }).connect()
  try {
    await expect(limited.sendCommand(['INFO', 'memory'])).rejects.toThrow(/NOPERM/)
    await claim(new RedisStore({ client: limited }))
    expect(evictionWarnings()).toEqual([])
  } finally {
    await limited.close()
  }
})
