import { afterAll, beforeAll, expect, test } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { createClient } from 'redis'
import { startRedisServer, type RedisServer } from '../../../../scripts/redis-server.mjs'
import { listRecords, RedisStore } from '../../../../src/redis.js'
import { keyOf } from '../../../support/record-keys.js'

const k = (name: string): string => keyOf('ns', name)

/**
 * SCAN may return a key more than once: when the keyspace's hash table shrinks between two
 * steps, the smaller table's buckets take in buckets of the larger one already visited
 * (https://redis.io/docs/latest/commands/scan/#scan-guarantees). On a server of its own (the
 * shared one's table is everyone's), other data is written and deleted between the steps of a
 * listing, until the server has returned one of our keys twice.
 */
let server: RedisServer
let admin: Awaited<ReturnType<typeof connect>>
const connect = async (url: string) => await createClient({ url }).connect()
beforeAll(async () => {
  server = await startRedisServer()
  admin = await connect(server.url)
})
afterAll(async () => {
  await admin.close()
  await server.stop()
})

const FILLERS = 4000

/** Bytes of the keyspace's hash table (MEMORY STATS), which shrinks once the server resizes it. */
const tableBytes = async (): Promise<number> => {
  const stats = await admin.sendCommand(['MEMORY', 'STATS']) as unknown
  const field = (of: unknown, name: string): unknown => Array.isArray(of) ? of[of.indexOf(name) + 1] as unknown : (of as Record<string, unknown> | undefined)?.[name]
  return Number(field(field(stats, 'db.0'), 'overhead.hashtable.main') ?? 0)
}

test('listRecords lists each record once, when SCAN returns a key again', async () => {
  const client = await connect(server.url)
  const scanned: string[] = []
  let steps = 0
  // Between steps: other data grows the table, then goes, and the server shrinks it (its cron
  // resizes a table under 10% full): the event awaited is the smaller table, read back.
  const between = async (): Promise<void> => {
    if (steps % 2 === 1) {
      await Promise.all(Array.from({ length: FILLERS }, async (_, i) => await admin.sendCommand(['SET', `filler:${i}`, 'x'])))
      return
    }
    await Promise.all(Array.from({ length: FILLERS }, async (_, i) => await admin.sendCommand(['DEL', `filler:${i}`])))
    while (await tableBytes() > 40_000) await new Promise((resolve) => setImmediate(resolve))
  }
  const repeated = (): boolean => new Set(scanned).size < scanned.length
  const watching = {
    sendCommand: async (args: string[]): Promise<unknown> => {
      if (args[0] !== 'SCAN') return await client.sendCommand(args)
      if (steps++ > 0 && !repeated()) await between()
      const reply = await client.sendCommand(args) as [string, string[]]
      scanned.push(...reply[1])
      return reply
    }
  }
  try {
    const store = new RedisStore({ client: watching, keyPrefix: 'idem:' })
    const nowMs = Date.now()
    const keys = Array.from({ length: 300 }, (_, i) => k(String(i)))
    await Promise.all(keys.map(async (key) => {
      expect(await store.claim({ key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + 3600, inProgressExpiry: nowMs + 60_000, leaseToken: randomUUID() }, nowMs)).toBeUndefined()
    }))
    const views = await listRecords(store, { pageSize: 5 })
    // The server did return a key twice: the case this test is about.
    expect(repeated()).toBe(true)
    expect(views.map((v) => v.key).sort()).toEqual([...keys].sort())
  } finally {
    await client.close()
  }
})
