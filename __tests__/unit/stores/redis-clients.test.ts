import { describe, expect, test } from '@jest/globals'
import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide'
import { Cluster, Redis } from 'ioredis'
import { createClient, createCluster } from 'redis'
import { IdempotencyConfigError } from '../../../src/index.js'
import { connect } from '../../../src/stores/redis/connect.js'
import { isNoScript, normalise } from '../../../src/stores/redis/connection.js'
import { keySlot } from '../../../src/stores/redis/key-slot.js'

// How RedisStore recognises each client family and talks to it. Recognition is tested on the
// real client objects (not connected: GLIDE's have their real prototypes); what each adapter
// sends, on fakes of each shape. Against real servers: __tests__/integration/stores/redis-*.

describe('a client is recognised by its family', () => {
  test.each([
    ['a node-redis client', () => createClient(), 'node-redis client (or { sendCommand(args) })'],
    ['a node-redis client speaking RESP3', () => createClient({ RESP: 3 }), 'node-redis client (or { sendCommand(args) })'],
    ['a node-redis cluster', () => createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), 'node-redis cluster'],
    ['a node-redis v4 cluster (getMasters(), no masters array)', () => ({ sendCommand: async () => null, getMasters: () => [] }), 'node-redis cluster'],
    ['an ioredis Redis', () => new Redis({ lazyConnect: true }), 'ioredis'],
    ['an ioredis Cluster', () => new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true }), 'ioredis cluster'],
    ['a GLIDE client', () => Object.create(GlideClient.prototype) as unknown, 'Valkey GLIDE client'],
    ['a GLIDE cluster client', () => Object.create(GlideClusterClient.prototype) as unknown, 'Valkey GLIDE cluster client'],
    ['any { sendCommand(args) }', () => ({ sendCommand: async () => null }), 'node-redis client (or { sendCommand(args) })']
  ])('%s', (_name, make, family) => {
    expect(connect(make()).family).toBe(family)
  })

  test.each([
    ['a node-redis client: one connection, to the server that takes the writes', () => createClient(), true],
    ['a node-redis cluster: every command to its key\'s primary', () => createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), true],
    ['an ioredis Redis: one connection', () => new Redis({ lazyConnect: true }), true],
    ['an ioredis Cluster reading from primaries (its default)', () => new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true }), true],
    ['an ioredis Cluster with scaleReads: \'slave\'', () => new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, scaleReads: 'slave' }), false],
    ['an ioredis Cluster with scaleReads: \'all\'', () => new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, scaleReads: 'all' }), false],
    ['a GLIDE client (its readFrom is not to be seen)', () => Object.create(GlideClient.prototype) as unknown, false],
    ['a GLIDE cluster client: every command routed to its key\'s primary', () => Object.create(GlideClusterClient.prototype) as unknown, true],
    ['any { sendCommand(args) }: it may route a read anywhere', () => ({ sendCommand: async () => null }), false]
  ])('%s reads from the primary by a bare read: %s', (_name, make, primary) => {
    expect(connect(make()).readsFromPrimary).toBe(primary)
  })

  test('anything else is an IdempotencyConfigError that names the families it takes', () => {
    for (const client of [undefined, null, 'redis://localhost', {}, { send: async () => null }]) {
      expect(() => connect(client)).toThrow(IdempotencyConfigError)
    }
    expect(() => connect({})).toThrow('RedisStore: client is of no family RedisStore knows: give a connected node-redis client or cluster, an ioredis or iovalkey Redis or Cluster, a Valkey GLIDE client, or an object with sendCommand(args: string[]) => Promise<reply>')
  })
})

describe('each adapter sends in its family\'s own shape', () => {
  test('node-redis cluster: the key first, never read-only (a replica may lag), then the arguments', async () => {
    const calls: unknown[][] = []
    const cluster = { masters: [], sendCommand: async (...args: unknown[]) => { calls.push(args); return Buffer.from('ok') } }
    expect(await connect(cluster).send('k1', ['GET', 'k1'])).toBe('ok')
    expect(calls).toEqual([['k1', false, ['GET', 'k1']]])
  })

  test('GLIDE cluster: every command routed to the primary of its key; a GLIDE client: no route', async () => {
    const routes: unknown[] = []
    const cluster = Object.assign(Object.create(GlideClusterClient.prototype) as object, { customCommand: async (args: string[], options?: unknown) => { routes.push(options); return args.length } })
    const single = Object.assign(Object.create(GlideClient.prototype) as object, { customCommand: async (_args: string[], options?: unknown) => { routes.push(options); return null } })
    await connect(cluster).sendEach([{ key: 'a', args: ['GET', 'a'] }, { key: 'b', args: ['GET', 'b'] }])
    await connect(single).send('c', ['GET', 'c'])
    expect(routes).toEqual([{ route: { type: 'primarySlotKey', key: 'a' } }, { route: { type: 'primarySlotKey', key: 'b' } }, undefined])
  })

  test('ioredis: a bulk read is one pipeline; an error in it rejects the read', async () => {
    const pipelines: string[][][] = []
    const client = {
      call: async () => null,
      pipeline: () => {
        const queued: string[][] = []
        pipelines.push(queued)
        return {
          call: (...args: string[]) => { queued.push(args) },
          exec: async () => queued.map(([, key]) => (key === 'bad' ? [new Error('WRONGTYPE'), null] : [null, [Buffer.from(key as string)]]) as [Error | null, unknown])
        }
      }
    }
    expect(await connect(client).sendEach([{ key: 'a', args: ['GET', 'a'] }, { key: 'b', args: ['GET', 'b'] }])).toEqual([['a'], ['b']])
    // In lower case: iovalkey knows a command's keys (its keyPrefix, its Cluster's node) only by that name.
    expect(pipelines).toEqual([[['get', 'a'], ['get', 'b']]])
    await expect(connect(client).sendEach([{ key: 'bad', args: ['GET', 'bad'] }])).rejects.toThrow('WRONGTYPE')
  })

  test('ioredis Cluster: one pipeline per group of nodes serving the keys\' slots', async () => {
    const pipelines: string[][] = []
    const slots: string[][] = []
    // Slots below 8192 on one node, the rest on another.
    for (let slot = 0; slot < 16384; slot++) slots.push([slot < 8192 ? '127.0.0.1:7000' : '127.0.0.1:7001'])
    const cluster = {
      isCluster: true,
      slots,
      call: async () => null,
      pipeline: () => {
        const keys: string[] = []
        pipelines.push(keys)
        return { call: (_command: string, key: string) => { keys.push(key) }, exec: async () => keys.map((key) => [null, key] as [null, string]) }
      }
    }
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']
    const replies = await connect(cluster).sendEach(keys.map((key) => ({ key, args: ['GET', key] })))
    expect(replies).toEqual(keys)
    expect(pipelines).toHaveLength(2)
    for (const group of pipelines) expect(new Set(group.map((key) => keySlot(key) < 8192)).size).toBe(1)
  })
})

describe('replies and errors in one shape', () => {
  test('Buffers and Uint8Arrays as text, bigints as numbers, undefined as null, arrays of the same', () => {
    const bytes = new TextEncoder().encode('xyz')
    expect(normalise([Buffer.from('é'), bytes.subarray(1), 7n, undefined, null, [Buffer.from('a')], 3])).toEqual(['é', 'yz', 7, null, null, ['a'], 3])
  })

  test('NOSCRIPT as node-redis and ioredis say it, and as GLIDE does', () => {
    expect(isNoScript(new Error('NOSCRIPT No matching script. Please use EVAL.'))).toBe(true)
    expect(isNoScript(new Error('An error was signalled by the server: - NoScriptError: No matching script. Please use EVAL.'))).toBe(true)
    expect(isNoScript(new Error('ERR Error running script (call to f_x): user_script:1: NOSCRIPTS'))).toBe(false)
    expect(isNoScript(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false)
  })
})

describe('the hash slot of a key', () => {
  test('is CRC16 (XMODEM) modulo 16384, of the hash tag when there is one', () => {
    // "123456789" is CRC16/XMODEM's check string: 0x31C3 = 12739.
    expect(keySlot('123456789')).toBe(12739)
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'))
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'))
    // An empty tag is no tag: the whole key is hashed. Only the first { and the first } after it count.
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'))
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'))
    expect(keySlot('foo{bar}{zap}')).toBe(keySlot('bar'))
  })
})
