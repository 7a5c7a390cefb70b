import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import type { createClient } from 'redis'
import { idempotency, IdempotencyConfigError, perRecord, type OutcomeReport } from '../../../src/index.js'
import { RedisStore } from '../../../src/redis.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { redisClients, uniquePrefix } from '../../support/redis.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

const clients = redisClients()
let client: Awaited<ReturnType<typeof createClient>>
beforeAll(async () => { client = await clients.nodeRedis() as never })
afterAll(async () => { await clients.close() })

/** A node-redis client that counts the commands RedisStore sends. */
const counting = () => {
  const sent: string[] = []
  return { sent, client: { sendCommand: async (args: string[]) => { sent.push(args[0] as string); return await client.sendCommand(args) } } }
}

describe.each(batchMiddyVersions)('RedisStore under the middleware, %s', (_name, middy) => {
  const consumer = (store: RedisStore, fn: (record: SQSRecord) => Promise<unknown>, outcomes: OutcomeReport[] = []) => {
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'orders', logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) } }))
      .handler(perRecord(fn))
    return async (records: SQSRecord[]) => await (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent(records), lambdaContext())
  }

  test('an SQS batch runs each record once; a redelivered duplicate costs one round trip and is replayed; a failure is reported alone', async () => {
    const { sent, client: counted } = counting()
    const store = new RedisStore({ client: counted, keyPrefix: uniquePrefix('sqs') })
    let runs = 0
    const run = consumer(store, async (record) => { runs++; if (JSON.parse(record.body).fail === true) throw new Error('declined'); return 'ok' })
    const ok = sqsRecord({ n: 1 })
    const bad = sqsRecord({ n: 2, fail: true })
    expect(failedIds(await run([ok, bad]))).toEqual([bad.messageId])
    expect(runs).toBe(2)
    sent.length = 0
    expect(failedIds(await run([redelivered(ok)]))).toEqual([])
    expect(runs).toBe(2)
    // A redelivery is read first (it is probably a duplicate): one HGETALL, nothing else.
    expect(sent).toEqual(['HGETALL'])
  })

  test('every key expires just after its record stops protecting', async () => {
    const prefix = uniquePrefix('ttl')
    const store = new RedisStore({ client, keyPrefix: prefix })
    await consumer(store, async () => 'ok')([sqsRecord({ n: 3 })])
    const [key] = await client.keys(`${prefix}*`)
    const ttlMs = await client.pTTL(key as string)
    // expiresAfterSeconds defaults to 3600: the key lives at least that long, and not much longer.
    expect(ttlMs).toBeGreaterThan(3600 * 1000)
    expect(ttlMs).toBeLessThanOrEqual(3603 * 1000)
  })

  test('after SCRIPT FLUSH (a restart, a failover), the scripts are sent again and the claim works', async () => {
    const store = new RedisStore({ client, keyPrefix: uniquePrefix('noscript') })
    const run = consumer(store, async () => 'ok')
    await run([sqsRecord({ n: 4 })])
    await client.scriptFlush()
    expect(failedIds(await run([sqsRecord({ n: 5 })]))).toEqual([])
  })

  test('transact fails its record with an IdempotencyConfigError saying why (no transactions), never COMPLETED', async () => {
    const store = new RedisStore({ client, keyPrefix: uniquePrefix('transact') })
    const outcomes: OutcomeReport[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'orders', logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) } }))
      .handler(perRecord(async (_record: SQSRecord, { transact }) => { transact({ Put: { TableName: 'Orders', Item: { id: 1 } } }) }))
    const record = sqsRecord({ n: 6 })
    expect(failedIds(await (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(outcomes[0]?.error).toBeInstanceOf(IdempotencyConfigError)
    expect((outcomes[0]?.error as Error).message).toMatch(/RedisStore does not/)
  })
})

test("effects: 'transact-only' with RedisStore is refused when the middleware is built, saying why", () => {
  expect(() => idempotency({ store: new RedisStore({ client: { sendCommand: async () => null } }), effects: 'transact-only' }))
    .toThrow(/effects: 'transact-only' needs a store that commits transactions with the record's completion \(DynamoDBStore\); RedisStore does not/)
})

test('a client of no known family is refused, saying which it takes', () => {
  expect(() => new RedisStore({ client: {} as never })).toThrow(/give a node-redis, ioredis, iovalkey or Valkey GLIDE client, or an object with sendCommand/)
})
