import { describe, expect, test } from '@jest/globals'
import { IdempotencyConfigError, IdempotencyStoreError } from '../../../src/index.js'
import type { ClaimRecord } from '../../../src/store.js'
import { RedisStore } from '../../../src/redis.js'
import { expireAt } from '../../../src/stores/redis/store-options.js'
import { READ } from '../../../src/stores/redis/scripts.js'

// Faults a real server does not produce on demand, through a fake { sendCommand(args) }.
// What a real server does: __tests__/integration/stores/redis-*.

const record: ClaimRecord = { key: 'ns#k', status: 'IN_PROGRESS', expiry: 1_700_000_100, inProgressExpiry: 1_700_000_030_000, leaseToken: 't' }

const SCRIPT_NAMES = new Set(['claim', 'complete', 'fail', 'release'])

/**
 * A client answering each script call with what `answer` gives (or throws) for it, keeping what
 * it was sent (`sent`) and each script call as it would be sent alone (`calls`: `EVALSHA sha 1
 * key ...args`). A command of many calls (one server: the calls of a burst go together) is
 * answered call by call, as the server's batching script does: `[1, reply]` or `[0, message]`.
 * The store's one INFO (its first call asks the eviction policy) is kept apart (`info`) and
 * answered with no policy, so that `sent` is the records' commands.
 */
const fake = (answer: (args: string[]) => unknown) => {
  const sent: string[][] = []
  const calls: string[][] = []
  const info: string[][] = []
  const sendCommand = async (args: string[]): Promise<unknown> => {
    if (args[0] === 'INFO') {
      info.push(args)
      return ''
    }
    sent.push(args)
    const keys = Number(args[2])
    if (!/^EVAL(SHA)?$/.test(args[0] as string) || !SCRIPT_NAMES.has(args[3 + keys] as string)) {
      calls.push(args)
      return answer(args)
    }
    const alone: string[][] = []
    for (let at = 3 + keys, i = 0; i < keys; i++) {
      const count = Number(args[at + 1])
      alone.push([args[0] as string, args[at] as string, '1', args[3 + i] as string, ...args.slice(at + 2, at + 2 + count)])
      at += 2 + count
    }
    // What refuses a command whole (NOSCRIPT, a lost connection) refuses it whatever its calls.
    if (args[0] === 'EVALSHA') answer(args)
    calls.push(...alone)
    return alone.map((call) => {
      try {
        return [1, answer(call)]
      } catch (error) {
        return [0, (error as Error).message]
      }
    })
  }
  return { sent, calls, info, client: { sendCommand } }
}

describe('RedisStore faults', () => {
  test('the first call of a store also sends INFO memory (the eviction policy), once; later calls and other stores\' calls do not repeat it', async () => {
    const { client, info, sent } = fake(() => null)
    const store = new RedisStore({ client })
    await Promise.all([store.claim(record, 1_700_000_000_000), store.claim({ ...record, key: 'ns#j' }, 1_700_000_000_000)])
    await store.claim({ ...record, key: 'ns#i' }, 1_700_000_000_000)
    expect(info).toEqual([['INFO', 'memory']])
    expect(sent.map((args) => args[0])).toEqual(['EVALSHA', 'EVALSHA'])
    await new RedisStore({ client }).claim(record, 1_700_000_000_000)
    expect(info).toHaveLength(2)
  })

  test('a client error is an IdempotencyStoreError naming the operation, key and family, keeping the error as cause', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })
    const store = new RedisStore({ client: fake(() => { throw refused }).client, keyPrefix: 'idem:' })
    const error = await store.claim(record, 1_700_000_000_000).catch((e: unknown) => e) as IdempotencyStoreError
    expect(error).toBeInstanceOf(IdempotencyStoreError)
    expect(error).toMatchObject({ operation: 'claim', key: 'ns#k', cause: refused })
    expect(error.message).toBe('claim of key idem:ns#k on Redis (node-redis client (or { sendCommand(args) })) failed: Error: connect ECONNREFUSED 127.0.0.1:6379')
    await expect(store.complete('ns#k', 't', { expiry: 1 })).rejects.toMatchObject({ operation: 'complete' })
    await expect(store.read(['ns#k'])).rejects.toMatchObject({ name: 'IdempotencyStoreError', operation: 'read' })
  })

  test('a server older than Redis 6.2 (its SET takes no PXAT) fails each write with an error that says what the store needs', async () => {
    // What Redis 6.0 answers a script's SET … PXAT; the tests' server is 7.x, so it is injected here.
    const old = fake(() => { throw new Error('ERR Error running script (call to f_0123): @user_script:9: @user_script: 9: ERR syntax error') })
    const store = new RedisStore({ client: old.client })
    await expect(store.claim(record, 1_700_000_000_000)).rejects.toThrow(/ERR syntax error \(RedisStore needs Redis OSS 6\.2 or later, or Valkey: its writes use SET … PXAT\)$/)
    await expect(store.complete('ns#k', 't', { expiry: 1 })).rejects.toThrow(/needs Redis OSS 6\.2 or later/)
    // Another error is passed on as it is.
    const refusing = new RedisStore({ client: fake(() => { throw new Error('OOM command not allowed when used memory > maxmemory') }).client })
    await expect(refusing.claim(record, 1_700_000_000_000)).rejects.toThrow(/maxmemory'?$/)
  })

  test('NOSCRIPT is answered by sending the script whole (EVAL) once; any other error is not retried', async () => {
    const { client, sent } = fake((args) => {
      if (args[0] === 'EVALSHA') throw new Error('NOSCRIPT No matching script. Please use EVAL.')
      return 1
    })
    const store = new RedisStore({ client })
    expect(await store.release('ns#k', 't')).toBe(true)
    expect(sent.map((args) => args[0])).toEqual(['EVALSHA', 'EVAL'])
    expect(sent[1]?.[1]).toContain("redis.call('DEL', KEYS[1])")
    const failing = fake(() => { throw new Error('READONLY You can\'t write against a read only replica.') })
    await expect(new RedisStore({ client: failing.client }).release('ns#k', 't')).rejects.toThrow(/READONLY/)
    expect(failing.sent.map((args) => args[0])).toEqual(['EVALSHA'])
  })

  test('a refused claim whose reply is not a record is a store error, never a claim', async () => {
    const refusals = [[], 'OK', 0, 'PAID\n1\n\nt\n\n', 'COMPLETED\nsoon\n\nt\n\n', 'COMPLETED\n1\n\nt\n', 'FAILED\n1\n\nt\n\ne{"name":"E"}', 'COMPLETED\n1\n\nt\n\nx']
    for (const reply of refusals) {
      const store = new RedisStore({ client: fake(() => reply).client })
      await expect(store.claim(record, 1_700_000_000_000)).rejects.toThrow(IdempotencyStoreError)
    }
  })

  test('a fence that answers neither 1 nor 0 is a store error, never "lease lost"', async () => {
    const store = new RedisStore({ client: fake(() => 'OK').client })
    await expect(store.complete('ns#k', 't', { expiry: 1 })).rejects.toThrow(/the script answered "OK", not 1 or 0/)
  })

  test('a key of the same name holding something else is a store error on read, naming only the start of the value', async () => {
    const store = new RedisStore({ client: fake(() => ['an application\'s own string, long and perhaps secret']).client })
    await expect(store.read(['ns#k'])).rejects.toThrow('the value is not a record of RedisStore (it starts "an application\'s")')
  })

  test('an empty lease token, or a lease token or payload hash with a line break, is refused before anything is sent: the record\'s header could not hold it', async () => {
    const { client, sent } = fake(() => null)
    const store = new RedisStore({ client })
    await expect(store.claim({ ...record, leaseToken: 'a\nb' }, 1_700_000_000_000)).rejects.toThrow(/line break/)
    await expect(store.claim({ ...record, payloadHash: 'h\n' }, 1_700_000_000_000)).rejects.toMatchObject({ name: 'IdempotencyStoreError', operation: 'claim' })
    // An empty token would read back as none: a lost answer's retry could not know the record for its own.
    await expect(store.claim({ ...record, leaseToken: '' }, 1_700_000_000_000)).rejects.toThrow(/an empty lease token/)
    expect(sent).toEqual([])
  })

  test('settlements send their body: the result\'s JSON after a d, the error as JSON after an e', async () => {
    const { client, calls } = fake(() => 1)
    const store = new RedisStore({ client })
    await store.complete('ns#k', 't', { expiry: 5, responseData: '{"ok":true}' })
    await store.complete('ns#k', 't', { expiry: 5 })
    await store.fail('ns#k', 't', { expiry: 5, error: { name: 'CardError', message: 'declined\nhard', code: 'card_declined' } })
    await store.fail('ns#k', 't', { expiry: 5, error: { name: 'Error', message: '' } })
    expect(calls.map((args) => args.slice(4))).toEqual([
      ['t', '5', 'd{"ok":true}', String(expireAt(5))],
      ['t', '5', '', String(expireAt(5))],
      ['t', '5', 'e["CardError","declined\\nhard","card_declined"]', String(expireAt(5))],
      ['t', '5', 'e["Error",""]', String(expireAt(5))]
    ])
  })

  test('the claim sends the caller\'s clock, the record and when the key expires; EVALSHA names one key, the prefixed one', async () => {
    const { client, sent } = fake(() => null)
    const store = new RedisStore({ client, keyPrefix: 'p:' })
    expect(await store.claim({ ...record, payloadHash: 'h' }, 1_700_000_000_999)).toBeUndefined()
    const args = ['1700000000999', '1700000000', 't', '1700000100', '1700000030000', 'h', String(expireAt(1_700_000_100))]
    expect(sent[0]?.slice(2)).toEqual(['1', 'p:ns#k', ...args])
    // Claimed with another in the same burst, it is one call of a command naming both keys.
    await Promise.all([store.claim({ ...record, payloadHash: 'h' }, 1_700_000_000_999), store.claim({ ...record, key: 'ns#j' }, 1_700_000_000_999)])
    expect(sent[1]?.slice(2, 14)).toEqual(['2', 'p:ns#k', 'p:ns#j', 'claim', '7', ...args])
  })

  /** Answers the read script (EVAL of READ) with no record for each of its keys. */
  const nothingStored = (args: string[]): unknown => args[1] === READ ? Array.from({ length: Number(args[2]) }, () => null) : 'unexpected'

  test('a read of no keys sends nothing; a read names each key once, all in one command', async () => {
    const { client, sent } = fake(nothingStored)
    const store = new RedisStore({ client })
    expect((await store.read([])).size).toBe(0)
    expect(sent).toEqual([])
    await store.read(['a', 'b', 'a'])
    expect(sent).toEqual([['EVAL', READ, '2', 'a', 'b']])
  })

  test('node-redis\'s own client reads a slice by a bare MGET, and a key alone by GET when a slice is refused', async () => {
    let refuse = true
    const sent: string[][] = []
    // node-redis's shape: duplicate() and the isOpen flag (one connection, to the primary).
    const client = {
      isOpen: true,
      duplicate: () => client,
      sendCommand: async (args: string[]) => {
        sent.push(args)
        if (refuse) { refuse = false; throw new Error('LOADING Redis is loading the dataset in memory') }
        return args[0] === 'MGET' ? args.slice(1).map(() => null) : null
      }
    }
    const store = new RedisStore({ client })
    expect((await store.read(['a', 'b'])).size).toBe(0)
    expect(sent).toEqual([['MGET', 'a', 'b'], ['GET', 'a'], ['GET', 'b']])
    sent.length = 0
    expect((await store.read(['a', 'b'])).size).toBe(0)
    expect(sent).toEqual([['MGET', 'a', 'b']])
  })

  test('a slice refused for another reason than CROSSSLOT is read a command per key this time, and in one command again next time', async () => {
    let refuse = true
    const { client, sent } = fake((args) => {
      if (refuse) { refuse = false; throw new Error('LOADING Redis is loading the dataset in memory') }
      return nothingStored(args)
    })
    const store = new RedisStore({ client })
    expect((await store.read(['a', 'b'])).size).toBe(0)
    expect(sent.map((args) => args.slice(2))).toEqual([['2', 'a', 'b'], ['1', 'a'], ['1', 'b']])
    sent.length = 0
    expect((await store.read(['a', 'b'])).size).toBe(0)
    expect(sent.map((args) => args.slice(2))).toEqual([['2', 'a', 'b']])
  })

  test('a key expires after the first millisecond its record no longer protects', () => {
    // expiry is in seconds: the record protects until the last millisecond of that second.
    expect(expireAt(100)).toBeGreaterThan(100_999)
  })

  test('bad options are refused at once, naming the option', () => {
    const client = { sendCommand: async () => null }
    expect(() => new RedisStore(undefined as never)).toThrow(new IdempotencyConfigError('RedisStore: options are required ({ client })'))
    expect(() => new RedisStore({ client, keyPrefix: 1 as never })).toThrow('RedisStore: keyPrefix must be a string')
    expect(() => new RedisStore({ client, maxResponseBytes: 0 })).toThrow('RedisStore: maxResponseBytes must be a positive integer')
    expect(() => new RedisStore({ client: { get: async () => null } as never })).toThrow(/client is of no family RedisStore knows/)
    expect(() => new RedisStore({ client, keyprefix: 'idem:' } as never)).toThrow("RedisStore: unknown option 'keyprefix' (did you mean 'keyPrefix'?)")
  })

  test('on one server, the script calls of a burst go as one command, each answered on its own: one call\'s error fails only that call', async () => {
    const { client, sent } = fake((args) => {
      if (args[1] === 'complete') throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value')
      return args[1] === 'claim' ? null : 1
    })
    const store = new RedisStore({ client })
    const [claimed, completed, released] = await Promise.allSettled([
      store.claim(record, 1_700_000_000_000), store.complete('ns#other', 't', { expiry: 1 }), store.release('ns#third', 't')
    ])
    expect(sent).toHaveLength(1)
    expect(sent[0]?.slice(2, 6)).toEqual(['3', 'ns#k', 'ns#other', 'ns#third'])
    expect(claimed).toEqual({ status: 'fulfilled', value: undefined })
    expect(completed).toMatchObject({ status: 'rejected', reason: { name: 'IdempotencyStoreError', operation: 'complete', key: 'ns#other' } })
    expect(String((completed as PromiseRejectedResult).reason.message)).toMatch(/WRONGTYPE/)
    expect(released).toEqual({ status: 'fulfilled', value: true })
  })

  test('a command carries at most 100 calls: 150 at once make two', async () => {
    const { client, sent } = fake(() => 1)
    const store = new RedisStore({ client })
    const held = await Promise.all(Array.from({ length: 150 }, async (_, i) => await store.release(`ns#${i}`, 't')))
    expect(held.every((h) => h)).toBe(true)
    expect(sent.map((args) => Number(args[2]))).toEqual([100, 50])
  })

  test('a server that refuses the calls of a burst together (CROSSSLOT: a cluster after all) has each sent alone, and so from then on', async () => {
    const { client, sent } = fake((args) => {
      if (args[0] === 'EVALSHA' && Number(args[2]) > 1) throw new Error("CROSSSLOT Keys in request don't hash to the same slot")
      return 1
    })
    const store = new RedisStore({ client })
    expect(await Promise.all([store.release('ns#a', 't'), store.release('ns#b', 't')])).toEqual([true, true])
    expect(sent.map((args) => args.slice(2, 4))).toEqual([['2', 'ns#a'], ['1', 'ns#a'], ['1', 'ns#b']])
    sent.length = 0
    expect(await Promise.all([store.release('ns#a', 't'), store.release('ns#b', 't')])).toEqual([true, true])
    expect(sent.map((args) => args.slice(2, 5))).toEqual([['1', 'ns#a', 't'], ['1', 'ns#b', 't']])
  })

  test('a batch reply whose entry lacks the call\'s reply is a store error for that call, never a claim written', async () => {
    // A real server answers [1, reply] for each call; a broken proxy might cut an entry short.
    const store = new RedisStore({ client: { sendCommand: async () => [[1], [1, null]] } })
    const [first, second] = await Promise.allSettled([store.claim(record, 1_700_000_000_000), store.claim({ ...record, key: 'ns#k2' }, 1_700_000_000_000)])
    expect(first).toMatchObject({ status: 'rejected', reason: { name: 'IdempotencyStoreError', operation: 'claim', key: 'ns#k' } })
    expect(second).toEqual({ status: 'fulfilled', value: undefined })
  })
})
