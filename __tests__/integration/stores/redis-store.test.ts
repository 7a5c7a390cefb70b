import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals'
import fc from 'fast-check'
import { GlideClient } from '@valkey/valkey-glide'
import { Cluster, Redis } from 'ioredis'
import { Redis as Valkey } from 'iovalkey'
import { createClient } from 'redis'
import type { ClaimRecord } from '../../../src/store.js'
import { startRedisServer, type RedisServer } from '../../../scripts/redis-server.mjs'
import { RedisStore } from '../../../src/redis.js'
import { keySlot } from '../../../src/stores/redis/key-slot.js'
import { clusterFamilies, clusterNodes, countingClient, redisAdmin, redisClients, redisUrl, singleNodeFamilies, uniquePrefix, type Family } from '../../support/redis.js'

// What the store contract (redis-store.contract.test.ts) does not say: how records live on a
// real Redis — scripts the server forgot, keys that expire, a bulk read across a cluster's
// slots — through every client family, on one server and on a three-node cluster.
const clients = redisClients()
afterAll(async () => { await clients.close() })

const topologies: Array<['single' | 'cluster', Family[]]> = [['single', singleNodeFamilies], ['cluster', clusterFamilies]]
const cases = topologies.flatMap(([topology, families]) => families.map((family) => [family, topology] as const))

const claimOf = (key: string, token: string, nowMs: number, expiryS = 3600): ClaimRecord =>
  ({ key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + expiryS, inProgressExpiry: nowMs + 30_000, leaseToken: token, payloadHash: 'hash' })

// SCRIPT FLUSH on the shared server would make other files' scripts be sent again while they
// count round trips: single-node, these tests flush a server of their own.
let own: RedisServer
let flushing: ReturnType<typeof redisClients>
beforeAll(async () => { own = await startRedisServer(); flushing = redisClients({ url: own.url }) })
afterAll(async () => { await flushing.close(); await own.stop() })

describe.each(cases)('RedisStore with %s (%s)', (family, topology) => {
  const admin = redisAdmin(clients, topology)
  const storeOf = async (what: string) => {
    const keyPrefix = uniquePrefix(what)
    return { store: new RedisStore({ client: await clients[family](), keyPrefix }), keyPrefix }
  }

  test('after SCRIPT FLUSH on every node (a restart, a failover), the scripts are sent again: claim, refusal, complete and release work', async () => {
    const admin = topology === 'single' ? redisAdmin(flushing, 'single') : redisAdmin(clients, 'cluster')
    const store = new RedisStore({ client: await (topology === 'single' ? flushing : clients)[family](), keyPrefix: uniquePrefix('noscript') })
    const now = Date.now()
    expect(await store.claim(claimOf('k1', 'a', now), now)).toBeUndefined()
    await admin.flushScripts()
    expect(await store.claim(claimOf('k2', 'a', now), now)).toBeUndefined()
    await admin.flushScripts()
    expect(await store.claim(claimOf('k2', 'b', now), now)).toMatchObject({ leaseToken: 'a' })
    await admin.flushScripts()
    expect(await store.complete('k1', 'a', { expiry: Math.floor(now / 1000) + 60, responseData: '1' })).toBe(true)
    await admin.flushScripts()
    expect(await store.release('k2', 'a')).toBe(true)
    expect([...(await store.read(['k1', 'k2'])).keys()]).toEqual(['k1'])
  })

  test('every key expires just after its record stops protecting: the claim\'s IN_PROGRESS record, then the COMPLETED or FAILED one at its own expiry', async () => {
    const { store, keyPrefix } = await storeOf('ttl')
    const now = Date.now()
    const claimed = claimOf('claimed', 't', now, 600)
    await store.claim(claimed, now)
    await store.claim(claimOf('completed', 't', now, 600), now)
    await store.complete('completed', 't', { expiry: Math.floor(now / 1000) + 3600, responseData: '{}' })
    await store.claim(claimOf('failed', 't', now, 600), now)
    await store.fail('failed', 't', { expiry: Math.floor(now / 1000) + 7200, error: { name: 'E', message: 'm' } })
    const expiries = { claimed: claimed.expiry, completed: Math.floor(now / 1000) + 3600, failed: Math.floor(now / 1000) + 7200 }
    for (const [key, expiry] of Object.entries(expiries)) {
      const expiresAtMs = await admin.expireTime(keyPrefix + key)
      // The record protects through the last millisecond of its expiry second; Redis keeps it past that, and not for long.
      expect(expiresAtMs).toBeGreaterThan((expiry + 1) * 1000 - 1)
      expect(expiresAtMs).toBeLessThanOrEqual((expiry + 1) * 1000 + 5000)
    }
  })

  test('with the middleware\'s clockSkewMs, every key lives at least twice that past its expiry: a claim judges at its clock less the skew, and that clock may trail the server\'s', async () => {
    const { store, keyPrefix } = await storeOf('ttl-skew')
    const now = Date.now()
    const skew = { clockSkewMs: 7000 }
    const claimed = claimOf('claimed', 't', now, 600)
    await store.claim(claimed, now, skew)
    await store.claim(claimOf('completed', 't', now, 600), now, skew)
    await store.complete('completed', 't', { expiry: Math.floor(now / 1000) + 3600, responseData: '{}' }, skew)
    await store.claim(claimOf('failed', 't', now, 600), now, skew)
    await store.fail('failed', 't', { expiry: Math.floor(now / 1000) + 7200, error: { name: 'E', message: 'm' } }, skew)
    const expiries = { claimed: claimed.expiry, completed: Math.floor(now / 1000) + 3600, failed: Math.floor(now / 1000) + 7200 }
    for (const [key, expiry] of Object.entries(expiries)) {
      const expiresAtMs = await admin.expireTime(keyPrefix + key)
      expect(expiresAtMs).toBeGreaterThanOrEqual((expiry + 1) * 1000 + 2 * skew.clockSkewMs)
      expect(expiresAtMs).toBeLessThanOrEqual((expiry + 1) * 1000 + 2 * skew.clockSkewMs + 5000)
    }
  })

  test('settled again under the same lease (its answer lost, sent again), a record keeps nothing of what the earlier settlement wrote', async () => {
    const { store } = await storeOf('resettle')
    const now = Date.now()
    const expiry = Math.floor(now / 1000) + 60
    await store.claim(claimOf('k', 'a', now), now)
    expect(await store.fail('k', 'a', { expiry, error: { name: 'CardError', message: 'declined', code: 'card_declined' } })).toBe(true)
    expect(await store.complete('k', 'a', { expiry })).toBe(true)
    const completed = (await store.read(['k'])).get('k')
    expect(completed).toMatchObject({ status: 'COMPLETED', leaseToken: 'a', payloadHash: 'hash' })
    expect(completed?.error).toBeUndefined()
    expect(completed?.responseData).toBeUndefined()
    expect(await store.complete('k', 'a', { expiry, responseData: '{"ok":true}' })).toBe(true)
    expect(await store.fail('k', 'a', { expiry, error: { name: 'Error', message: 'boom' } })).toBe(true)
    const failed = (await store.read(['k'])).get('k')
    expect(failed).toMatchObject({ status: 'FAILED', error: { name: 'Error', message: 'boom' } })
    expect(failed?.error?.code).toBeUndefined()
    expect(failed?.responseData).toBeUndefined()
  })

  test('a record is one string under keyPrefix + key, with no hash tag added: five header lines, then the body', async () => {
    const { store, keyPrefix } = await storeOf('layout')
    const now = Date.now()
    const expiry = Math.floor(now / 1000) + 60
    await store.claim(claimOf('orders#abc', 't', now), now)
    expect(keyPrefix).not.toMatch(/[{}]/)
    expect(await admin.value(`${keyPrefix}orders#abc`)).toBe(`IN_PROGRESS\n${Math.floor(now / 1000) + 3600}\n${now + 30_000}\nt\nhash\n`)
    await store.fail('orders#abc', 't', { expiry, error: { name: 'CardError', message: 'declined\nfor good', code: 'card_declined' } })
    expect(await admin.value(`${keyPrefix}orders#abc`)).toBe(`FAILED\n${expiry}\n${now + 30_000}\nt\nhash\ne["CardError","declined\\nfor good","card_declined"]`)
    const { payloadHash: _none, ...noHash } = claimOf('no-hash', 'u', now)
    await store.claim(noHash, now)
    await store.complete('no-hash', 'u', { expiry, responseData: '{"multi":"line\\nresult"}' })
    expect(await admin.value(`${keyPrefix}no-hash`)).toBe(`COMPLETED\n${expiry}\n${now + 30_000}\nu\n\nd{"multi":"line\\nresult"}`)
    expect((await store.read(['orders#abc', 'no-hash']))).toEqual(new Map([
      ['orders#abc', { key: 'orders#abc', status: 'FAILED', expiry, inProgressExpiry: now + 30_000, leaseToken: 't', payloadHash: 'hash', error: { name: 'CardError', message: 'declined\nfor good', code: 'card_declined' } }],
      ['no-hash', { key: 'no-hash', status: 'COMPLETED', expiry, inProgressExpiry: now + 30_000, leaseToken: 'u', responseData: '{"multi":"line\\nresult"}' }]
    ]))
  })
})

describe.each(clusterFamilies)('a bulk read on the cluster with %s', (family) => {
  test('keys in slots of all three nodes are read in one call, never one cross-slot command (ioredis: one pipeline per node)', async () => {
    const client = await clients[family]()
    const store = new RedisStore({ client, keyPrefix: uniquePrefix('bulk') })
    const keys = Array.from({ length: 30 }, (_, i) => `orders#${i}`)
    const now = Date.now()
    await Promise.all(keys.filter((_, i) => i % 3 !== 0).map(async (key) => await store.claim(claimOf(key, `t-${key}`, now), now)))
    const cluster = await clients.nodeRedisCluster()
    const owners = new Set(keys.map((key) => cluster.getSlotMaster(keySlot(key)).id))
    expect(owners.size).toBe(3)
    const pipelines = family === 'ioredisCluster' ? jest.spyOn(client as Cluster, 'pipeline') : undefined
    const found = await store.read(keys)
    expect([...found.keys()].sort()).toEqual(keys.filter((_, i) => i % 3 !== 0).sort())
    for (const [key, record] of found) expect(record).toMatchObject({ key, status: 'IN_PROGRESS', leaseToken: `t-${key}` })
    // ioredis: one pipeline per node, never one cross-slot command.
    if (pipelines !== undefined) expect(pipelines).toHaveBeenCalledTimes(3)
  })
})

test('on one server, a slice of reads is one command, whatever slots its keys would have in a cluster: a bare MGET from node-redis, an MGET in a script from a client the store cannot see into', async () => {
  // This file's own server: its command counts are this test's alone.
  const nodeRedis = await flushing.nodeRedis()
  const { client, sent } = countingClient(nodeRedis)
  const keyPrefix = uniquePrefix('slice')
  const opaque = new RedisStore({ client, keyPrefix })
  const keys = Array.from({ length: 300 }, (_, i) => `orders#${i}`)
  const now = Date.now()
  await Promise.all(keys.filter((_, i) => i % 2 === 0).map(async (key) => await opaque.claim(claimOf(key, `t-${key}`, now), now)))
  sent.length = 0
  const found = await opaque.read(keys)
  expect(sent).toEqual(['EVAL'])
  expect([...found.keys()].sort()).toEqual(keys.filter((_, i) => i % 2 === 0).sort())
  for (const [key, record] of found) expect(record).toMatchObject({ key, status: 'IN_PROGRESS', leaseToken: `t-${key}`, payloadHash: 'hash' })

  const admin = await createClient({ url: own.url }).connect()
  try {
    await admin.configResetStat()
    expect(await new RedisStore({ client: nodeRedis, keyPrefix }).read(keys)).toEqual(found)
    const ran = [...(await admin.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => `${m[1] as string} ${m[2] as string}`)
    expect(ran.filter((line) => !/^(info|config\|resetstat) /.test(line))).toEqual(['mget 1'])
  } finally {
    await admin.quit()
  }
})

test('on one server, the claims, completions and releases of a burst are one command; a key holding something else fails its own call only, and is never overwritten', async () => {
  const raw = await clients.nodeRedis()
  const { client, sent } = countingClient(raw)
  const keyPrefix = uniquePrefix('burst')
  const store = new RedisStore({ client, keyPrefix })
  const now = Date.now()
  const expiry = Math.floor(now / 1000) + 60
  await raw.set(`${keyPrefix}foreign`, 'an application\'s own string')
  await raw.hSet(`${keyPrefix}foreign-hash`, 'field', 'value')
  // Records' headers but for a number that is none, or not as the store writes numbers (Lua's tonumber would take
  // hex, exponents and -inf): not ours either, however long ago they would have "expired".
  const odd = ['IN_PROGRESS\n1\nsoon\nt\n\n', 'IN_PROGRESS\n99999999999\n-inf\nt\n\n', 'COMPLETED\n0x10\n\nt\n\nd1', 'COMPLETED\n-1e999\n\nt\n\nd1']
  await Promise.all(odd.map(async (value, i) => await raw.set(`${keyPrefix}odd-${i}`, value)))
  // Two claims at once load the batching script (a claim alone goes as its own script), so that what is counted below is the burst alone.
  await Promise.all(['warm', 'warm-too'].map(async (key) => await store.claim(claimOf(key, 't', now), now)))
  sent.length = 0
  const claims = await Promise.allSettled(['a', 'b', 'foreign', 'c', 'foreign-hash'].map(async (key) => await store.claim(claimOf(key, `t-${key}`, now), now)))
  expect(sent).toEqual(['EVALSHA'])
  expect(claims.map((c) => c.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected'])
  expect((claims[2] as PromiseRejectedResult).reason).toMatchObject({ name: 'IdempotencyStoreError', operation: 'claim', key: 'foreign', message: expect.stringMatching(/not a record of RedisStore/) })
  expect((claims[4] as PromiseRejectedResult).reason).toMatchObject({ name: 'IdempotencyStoreError', operation: 'claim', key: 'foreign-hash', message: expect.stringMatching(/WRONGTYPE/) })
  expect(await raw.get(`${keyPrefix}foreign`)).toBe('an application\'s own string')
  expect(await raw.hGetAll(`${keyPrefix}foreign-hash`)).toEqual({ field: 'value' })
  for (const [i, value] of odd.entries()) {
    await expect(store.claim(claimOf(`odd-${i}`, 't-odd', now), now)).rejects.toThrow(/not a record of RedisStore/)
    await expect(store.read([`odd-${i}`])).rejects.toThrow(/not a record of RedisStore/)
    expect(await raw.get(`${keyPrefix}odd-${i}`)).toBe(value)
  }
  sent.length = 0
  expect(await Promise.all([
    store.complete('a', 't-a', { expiry, responseData: '{"n":1}' }),
    store.fail('b', 't-b', { expiry, error: { name: 'CardError', message: 'declined' } }),
    store.release('c', 't-c'),
    store.complete('c', 't-c', { expiry })
  ])).toEqual([true, true, true, false])
  expect(sent).toEqual(['EVALSHA'])
  const read = await store.read(['a', 'b', 'c'])
  expect(read.get('a')).toMatchObject({ status: 'COMPLETED', responseData: '{"n":1}' })
  expect(read.get('b')).toMatchObject({ status: 'FAILED', error: { name: 'CardError', message: 'declined' } })
  expect(read.has('c')).toBe(false)
})

test('a single-endpoint client on a cluster-mode server: the slice it refuses (CROSSSLOT) is read a command per key, and so from then on', async () => {
  const cluster = await clients.nodeRedisCluster()
  const node = cluster.getSlotMaster(0)
  const raw = await createClient({ url: `redis://${node.host}:${node.port}` }).connect()
  const direct = countingClient(raw)
  try {
    const keyPrefix = uniquePrefix('crossslot')
    // Keys of several slots, all of them served by the node the client talks to.
    const keys = Array.from({ length: 400 }, (_, i) => `orders#${i}`).filter((key) => cluster.getSlotMaster(keySlot(keyPrefix + key)).id === node.id).slice(0, 5)
    expect(new Set(keys.map((key) => keySlot(keyPrefix + key))).size).toBe(5)
    const store = new RedisStore({ client: direct.client, keyPrefix })
    const now = Date.now()
    // Claimed at once: the burst is refused together (CROSSSLOT), then each claim is sent alone.
    expect(await Promise.all(keys.slice(0, 3).map(async (key) => await store.claim(claimOf(key, `t-${key}`, now), now)))).toEqual([undefined, undefined, undefined])
    // The store's first call also asks the server's eviction policy (INFO), sent before the burst.
    expect(direct.sent).toEqual(['INFO', 'EVALSHA', 'EVALSHA', 'EVALSHA', 'EVALSHA'])
    direct.sent.length = 0
    expect([...(await store.read(keys)).keys()].sort()).toEqual(keys.slice(0, 3).sort())
    expect(direct.sent).toEqual(['EVAL', 'EVAL', 'EVAL', 'EVAL', 'EVAL', 'EVAL'])
    direct.sent.length = 0
    expect([...(await store.read(keys)).keys()].sort()).toEqual(keys.slice(0, 3).sort())
    expect(direct.sent).toEqual(['EVAL', 'EVAL', 'EVAL', 'EVAL', 'EVAL'])
  } finally {
    await raw.quit()
  }
})

const prefixing: Array<[string, () => Redis | Valkey]> = [
  ['ioredis', () => new Redis(redisUrl(), { lazyConnect: true, keyPrefix: 'app:' })],
  ['iovalkey', () => new Valkey(redisUrl(), { lazyConnect: true, keyPrefix: 'app:' })]
]
describe.each(prefixing)('a %s client with its own keyPrefix', (_name, make) => {
  test('claims, a bulk read and settlements all name the keys it prefixes', async () => {
    const raw = await clients.nodeRedis()
    const client = make()
    await client.connect()
    try {
      const keyPrefix = uniquePrefix('own-prefix')
      const store = new RedisStore({ client, keyPrefix })
      const now = Date.now()
      expect(await store.claim(claimOf('k', 't', now), now)).toBeUndefined()
      expect(await store.complete('k', 't', { expiry: Math.floor(now / 1000) + 60, responseData: '1' })).toBe(true)
      expect((await store.read(['k', 'none'])).get('k')).toMatchObject({ status: 'COMPLETED', responseData: '1' })
      expect(await raw.get(`app:${keyPrefix}k`)).toMatch(/^COMPLETED\n/)
      expect(await raw.exists(`${keyPrefix}k`)).toBe(0)
    } finally {
      await client.quit()
    }
  })
})

test('a client set to read from replicas (GLIDE, readFrom preferReplica) still reads records from the primary, which has the latest claim', async () => {
  const primaryAdmin = await createClient({ url: own.url }).connect()
  // A replica's first sync is diskless, and by default waits 5 s for more replicas to join it:
  // this file's own server starts it at once.
  await primaryAdmin.configSet('repl-diskless-sync-delay', '0')
  const replica = await startRedisServer(['--replicaof', '127.0.0.1', String(own.port)])
  const replicaAdmin = await createClient({ url: replica.url }).connect()
  const glide = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: own.port }, { host: '127.0.0.1', port: replica.port }], readFrom: 'preferReplica', requestTimeout: 5000 })
  try {
    const store = new RedisStore({ client: glide, keyPrefix: uniquePrefix('replica') })
    const now = Date.now()
    expect(await store.claim(claimOf('k', 't', now), now)).toBeUndefined()
    // The replica has the claim too (WAIT answers once it acknowledged it): a read from either would find it.
    expect(await primaryAdmin.sendCommand(['WAIT', '1', '10000'])).toBe(1)
    await Promise.all([primaryAdmin.configResetStat(), replicaAdmin.configResetStat()])
    expect((await store.read(['k', 'none'])).get('k')).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 't' })
    const reads = async (admin: typeof primaryAdmin): Promise<string[]> =>
      [...(await admin.info('commandstats')).matchAll(/^cmdstat_([^:]+):/gm)].map((m) => m[1] as string).filter((name) => !['info', 'config|resetstat'].includes(name))
    expect(await reads(replicaAdmin)).toEqual([])
    expect((await reads(primaryAdmin)).sort()).toEqual(['eval', 'mget'])
  } finally {
    glide.close()
    await Promise.all([primaryAdmin.quit(), replicaAdmin.quit()])
    await replica.stop()
  }
})

test('an ioredis Cluster with its own keyPrefix: a bulk read across slots groups keys by the slot of the key ioredis sends', async () => {
  const cluster = new Cluster(clusterNodes(), { lazyConnect: true, keyPrefix: 'app:' })
  await cluster.connect()
  try {
    const store = new RedisStore({ client: cluster, keyPrefix: uniquePrefix('own-prefix') })
    const keys = Array.from({ length: 30 }, (_, i) => `orders#${i}`)
    const now = Date.now()
    await Promise.all(keys.map(async (key) => await store.claim(claimOf(key, 't', now), now)))
    expect((await store.read(keys)).size).toBe(30)
  } finally {
    await cluster.quit()
  }
})

test('the hash slot RedisStore computes is the one the cluster uses', async () => {
  const cluster = await clients.nodeRedisCluster()
  const key = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.tuple(fc.string(), fc.string(), fc.string()).map(([a, b, c]) => `${a}{${b}}${c}`))
  const keys = fc.sample(key, { numRuns: 100, seed: 4013 })
  const slots = await Promise.all(keys.map(async (k) => await cluster.sendCommand(undefined, true, ['CLUSTER', 'KEYSLOT', k])))
  expect(keys.map(keySlot)).toEqual(slots)
})
