import { afterAll, describe, expect, test } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { Cluster, Redis } from 'ioredis'
import { createClient } from 'redis'
import { inspectRecord, listRecords, RedisStore, releaseRecord } from '../../../../src/redis.js'
import { keySlot } from '../../../../src/stores/redis/key-slot.js'
import { clusterNodes, redisClients, redisUrl, uniquePrefix, type Family } from '../../../support/redis.js'
import { keyOf } from '../../../support/record-keys.js'

const k = (name: string): string => keyOf('ns', name)

/**
 * The operator functions of middy-idempotency/redis on a real three-node Redis Cluster, through
 * each cluster client the store takes, and through an ioredis client that adds its own keyPrefix.
 */
const clients = redisClients()
afterAll(async () => { await clients.close() })

const HOUR = 3600

/** Claims `names` under `store`; fails `failed` (its FAILED record is one release removes). */
const seed = async (store: RedisStore, names: readonly string[], failed?: string): Promise<void> => {
  const nowMs = Date.now()
  const expiry = Math.floor(nowMs / 1000) + HOUR
  for (const name of names) {
    const token = randomUUID()
    expect(await store.claim({ key: k(name), status: 'IN_PROGRESS', expiry, inProgressExpiry: nowMs + 600_000, leaseToken: token }, nowMs)).toBeUndefined()
    if (name === failed) expect(await store.fail(k(name), token, { expiry, error: { name: 'CardDeclined', message: 'declined' } })).toBe(true)
  }
}

/** The `host:port` of the primary that serves each slot, from CLUSTER SLOTS on one node. */
const slotOwners = async (): Promise<(slot: number) => string> => {
  const [first] = clusterNodes()
  const node = await createClient({ url: `redis://${first?.host ?? ''}:${first?.port ?? 0}` }).connect()
  try {
    const ranges = await node.sendCommand(['CLUSTER', 'SLOTS']) as Array<[number, number, [string, number]]>
    return (slot) => {
      const range = ranges.find(([start, end]) => slot >= start && slot <= end)
      return range === undefined ? 'none' : `${range[2][0]}:${range[2][1]}`
    }
  } finally {
    await node.close()
  }
}

const NAMES = Array.from({ length: 12 }, (_, i) => `order-${i}`)

describe.each<Family>(['nodeRedisCluster', 'ioredisCluster', 'glideCluster', 'nodeRedis4Cluster', 'iovalkeyCluster'])('operator functions on a Redis Cluster through %s', (family) => {
  test('listRecords finds every record on every primary; inspectRecord and releaseRecord reach the node that owns each key', async () => {
    const keyPrefix = uniquePrefix('op-cluster')
    const store = new RedisStore({ client: await clients[family](), keyPrefix })
    await seed(store, NAMES, 'order-3')
    const owner = await slotOwners()
    // The records are spread over more than one primary, so a listing of one node would miss some.
    expect(new Set(NAMES.map((name) => owner(keySlot(`${keyPrefix}${k(name)}`)))).size).toBeGreaterThan(1)

    const views = await listRecords(store)
    expect(views.map((v) => v.key).sort()).toEqual(NAMES.map((name) => k(name)).sort())
    expect(views.find((v) => v.key === k('order-3'))).toMatchObject({ status: 'FAILED', error: { name: 'CardDeclined' } })
    expect((await listRecords(store, { status: 'FAILED' })).map((v) => v.key)).toEqual([k('order-3')])

    for (const name of NAMES) expect(await inspectRecord(store, k(name))).toMatchObject({ key: k(name) })
    expect(await releaseRecord(store, k('order-3'))).toMatchObject({ released: true })
    expect(await inspectRecord(store, k('order-3'))).toBeUndefined()
  })
})

test('listRecords through a client of one node of a cluster is refused, saying to pass a cluster client (never a list of one node\'s records)', async () => {
  const [first] = clusterNodes()
  const one = await createClient({ url: `redis://${first?.host ?? ''}:${first?.port ?? 0}` }).connect()
  try {
    await expect(listRecords(new RedisStore({ client: one, keyPrefix: uniquePrefix('op-one-node') }))).rejects.toThrow(/one node of a Redis Cluster.*cluster client/)
  } finally {
    await one.close()
  }
})

describe('an ioredis client with a keyPrefix of its own', () => {
  test.each([['Redis', false], ['Cluster', true]])('ioredis %s: listRecords finds every record; inspectRecord and releaseRecord work', async (_name, cluster) => {
    const own = uniquePrefix('ioredis-own')
    const client = cluster
      ? new Cluster(clusterNodes(), { lazyConnect: true, keyPrefix: own })
      : new Redis(redisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1, keyPrefix: own })
    await client.connect()
    try {
      const store = new RedisStore({ client, keyPrefix: 'idem:' })
      const names = ['a', 'b', 'c', 'd', 'e']
      await seed(store, names, 'c')
      const views = await listRecords(store)
      expect(views.map((v) => v.key).sort()).toEqual(names.map((name) => k(name)).sort())
      expect(await inspectRecord(store, k('c'))).toMatchObject({ status: 'FAILED' })
      expect(await releaseRecord(store, k('c'))).toMatchObject({ released: true })
      expect((await listRecords(store)).map((v) => v.key).sort()).toEqual([k('a'), k('b'), k('d'), k('e')].sort())
    } finally {
      await client.quit()
    }
  })
})
