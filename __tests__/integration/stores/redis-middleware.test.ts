import { afterAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { KinesisStreamEvent, KinesisStreamRecord, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyConfigError, perRecord, type OutcomeReport } from '../../../src/index.js'
import { RedisStore } from '../../../src/redis.js'
import { keysOf } from '../../../src/cli/keys.js'
import { deferred } from '../../support/deferred.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { countingClient, redisClients, uniquePrefix } from '../../support/redis.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { kinesisEvent, kinesisRecord, retriedFrom } from '../../support/streams.js'

// The middleware on RedisStore, on a real redis-server (a counting node-redis client, to see
// what each step costs) and on the three-node cluster (ioredis, GLIDE): a batch per record, a
// stream with its ordering, a whole event, and a stale owner meeting the fence.
const clients = redisClients()
afterAll(async () => { await clients.close() })

type Invoke = (event: unknown, context: unknown) => Promise<unknown>

describe.each(batchMiddyVersions)('an SQS batch per record on RedisStore, with @middy/sqs-partial-batch-failure, %s', (_name, middyOf) => {
  test('each record runs once, a failure is reported alone; redelivered duplicates cost one command (a read of them all) and are replayed', async () => {
    const { client, sent } = countingClient(await clients.nodeRedis())
    const store = new RedisStore({ client, keyPrefix: uniquePrefix('sqs') })
    const ran: string[] = []
    const handler = middyOf<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'orders', logger: recordingLogger() }))
      .handler(perRecord(async (record: SQSRecord) => {
        ran.push(record.messageId)
        if ((JSON.parse(record.body) as { fail?: boolean }).fail === true) throw new Error('declined')
        return 'charged'
      })) as unknown as Invoke
    // A first batch has the server cache the scripts (a read, a claim, a completion, a release), as any warm server has.
    await handler(sqsEvent([sqsRecord({ n: 0 }), sqsRecord({ n: 0, fail: true }), sqsRecord({ n: 0 }, { receiveCount: 2 })]), lambdaContext())
    sent.length = 0
    ran.length = 0
    const ok = sqsRecord({ n: 1 })
    const bad = sqsRecord({ n: 2, fail: true })
    expect(failedIds(await handler(sqsEvent([ok, bad]), lambdaContext()))).toEqual([bad.messageId])
    // The two claims in one command; then the completion of the one and the release ('delete') of
    // the other, whose work ended together, in another.
    expect(sent).toEqual(['EVALSHA', 'EVALSHA'])
    sent.length = 0
    const also = sqsRecord({ n: 3 })
    await handler(sqsEvent([also]), lambdaContext())
    ran.length = 0
    sent.length = 0
    expect(failedIds(await handler(sqsEvent([redelivered(ok), redelivered(also)]), lambdaContext()))).toEqual([])
    expect(ran).toEqual([])
    // Redeliveries are probably duplicates, so they are read first: one command reading them all, and nothing else.
    expect(sent).toEqual(['EVAL'])
  })
})

const clusterClients: Array<[string, 'ioredisCluster' | 'glideCluster']> = [['ioredis', 'ioredisCluster'], ['Valkey GLIDE', 'glideCluster']]
describe.each(clusterClients)('a Kinesis batch on RedisStore on the cluster through %s', (_name, family) => {
  test('a failure holds back the rest of its partition key; the retry from it replays what completed and runs the rest', async () => {
    const store = new RedisStore({ client: await clients[family](), keyPrefix: uniquePrefix('kinesis') })
    const fail = new Set(['a2'])
    const ran: string[] = []
    const handler = middy<KinesisStreamEvent>()
      .use(idempotency({ store, namespace: 'shipments', logger: false }))
      .handler(perRecord(async (record: KinesisStreamRecord) => {
        const { id } = JSON.parse(Buffer.from(record.kinesis.data, 'base64').toString()) as { id: string }
        ran.push(id)
        if (fail.has(id)) throw new Error(`could not ship ${id}`)
        return id
      }) as never) as unknown as Invoke
    const records = [kinesisRecord({ id: 'a1' }, 'A'), kinesisRecord({ id: 'b1' }, 'B'), kinesisRecord({ id: 'a2' }, 'A'), kinesisRecord({ id: 'b2' }, 'B'), kinesisRecord({ id: 'a3' }, 'A')]
    const first = await handler(kinesisEvent(records.map((r) => structuredClone(r))), lambdaContext())
    expect(failedIds(first)).toEqual([records[2]?.kinesis.sequenceNumber, records[4]?.kinesis.sequenceNumber])
    expect(ran.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2'])
    fail.clear()
    ran.length = 0
    expect(await handler(kinesisEvent(retriedFrom(records, 2)), lambdaContext())).toEqual({ batchItemFailures: [] })
    // b2 completed the first time: replayed, not run again.
    expect(ran).toEqual(['a2', 'a3'])
  })
})

describe('a whole event on RedisStore', () => {
  test('a duplicate costs one round trip (the refused claim brings the record back) and replays the stored response', async () => {
    const { client, sent } = countingClient(await clients.nodeRedis())
    const store = new RedisStore({ client, keyPrefix: uniquePrefix('event') })
    let runs = 0
    const handler = middy<{ orderId: string }>()
      .use(idempotency({ store, key: 'orderId', namespace: 'api', logger: false }))
      .handler(async (event) => { runs++; return { charged: event.orderId } })
    expect(await handler({ orderId: 'o-1' }, lambdaContext())).toEqual({ charged: 'o-1' })
    // The claim's script is cached by now (sent whole, had the server not known it).
    sent.length = 0
    expect(await handler({ orderId: 'o-1' }, lambdaContext())).toEqual({ charged: 'o-1' })
    expect(runs).toBe(1)
    expect(sent).toEqual(['EVALSHA'])
  })

  test('a stale owner whose lease lapsed cannot complete over the new owner, who completed: its lease is reported lost and the new result replays', async () => {
    const store = new RedisStore({ client: await clients.glideCluster(), keyPrefix: uniquePrefix('fence') })
    let clock = Date.now()
    const outcomes: OutcomeReport[] = []
    const started = deferred()
    const gate = deferred()
    const handler = middy<{ orderId: string, owner: string }>()
      .use(idempotency({ store, key: 'orderId', payload: false, namespace: 'api', logger: recordingLogger(), now: () => clock, onOutcome: (o) => { outcomes.push(o) } }))
      .handler(async (event) => {
        if (event.owner === 'stale') { started.resolve(); await gate.promise }
        return { chargedBy: event.owner }
      })
    const stale = handler({ orderId: 'o-2', owner: 'stale' }, lambdaContext(30_000))
    await started.promise
    // The stale owner's lease (30 s from its claim) has lapsed by the new owner's clock.
    clock += 31_000
    expect(await handler({ orderId: 'o-2', owner: 'new' }, lambdaContext(30_000))).toEqual({ chargedBy: 'new' })
    gate.resolve()
    await stale.catch(() => undefined)
    expect(outcomes.map((o) => o.kind)).toEqual(['completed', 'lease-lost'])
    expect(await handler({ orderId: 'o-2', owner: 'third' }, lambdaContext(30_000))).toEqual({ chargedBy: 'new' })
  })
})

describe('transact needs a store with transactions', () => {
  test('transact fails its record with an IdempotencyConfigError naming RedisStore, and the record is never COMPLETED', async () => {
    const store = new RedisStore({ client: await clients.ioredis(), keyPrefix: uniquePrefix('transact') })
    const outcomes: OutcomeReport[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'orders', logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) } }))
      .handler(perRecord(async (_record: SQSRecord, { transact }) => { transact({ Put: { TableName: 'Orders', Item: { id: 1 } } }) })) as unknown as Invoke
    const record = sqsRecord({ n: 6 })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(outcomes[0]?.error).toBeInstanceOf(IdempotencyConfigError)
    expect((outcomes[0]?.error as Error).message).toMatch(/needs a store that commits transactions with the record's completion \(DynamoDBStore\); RedisStore does not/)
    // 'delete' released the record: nothing protects the key, so a redelivery meets the same error, not a stored success.
    expect(outcomes[0]?.kind).toBe('failed')
    expect((await store.read([outcomes[0]?.key as string])).size).toBe(0)
  })

  test("effects: 'transact-only' with RedisStore is refused when the middleware is built, saying why", () => {
    expect(() => idempotency({ store: new RedisStore({ client: { sendCommand: async () => null } }), effects: 'transact-only' }))
      .toThrow(/effects: 'transact-only' needs a store that commits transactions with the record's completion \(DynamoDBStore\); RedisStore does not/)
  })
})

describe('one batch, one bad key, on RedisStore on one server', () => {
  // The store side of this is in redis-store.test.ts; here, what a user sees: the claims of a batch
  // go as one command, in which each call is trapped on its own, so one key holding another
  // application's value fails its own record and none of its neighbours.
  test('a record whose key holds a hash of another application fails alone, in the same command as its neighbours\' claims, and the hash is never touched', async () => {
    const raw = await clients.nodeRedis()
    const { client, sent } = countingClient(raw)
    const keyPrefix = uniquePrefix('one-bad-key')
    const store = new RedisStore({ client, keyPrefix })
    const ran: string[] = []
    const outcomes: OutcomeReport[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: () => {} }))
      .use(idempotency({ store, namespace: 'orders', logger: false, onOutcome: (report) => { outcomes.push(report) } }))
      .handler(perRecord(async (record: SQSRecord) => { ran.push(record.messageId) })) as unknown as Invoke
    const [before, bad, after] = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 }), sqsRecord({ n: 3 })]
    const keys = keysOf(sqsEvent([bad]), { namespace: 'orders' })
    const badKey = 'records' in keys && 'key' in (keys.records[0] ?? {}) ? (keys.records[0] as { key: string }).key : undefined
    if (badKey === undefined) throw new Error('no key for the bad record')
    await raw.hSet(`${keyPrefix}${badKey}`, 'owner', 'another application')
    // A warm server has the batching script cached already.
    await Promise.all(['warm', 'warm-too'].map(async (key) => await store.claim({ key: `${key}-${Date.now()}`, status: 'IN_PROGRESS', expiry: Math.floor(Date.now() / 1000) + 60, inProgressExpiry: Date.now() + 1000, leaseToken: 't' }, Date.now())))
    sent.length = 0
    const response = await handler(sqsEvent([before, bad, after]), lambdaContext())
    expect(failedIds(response)).toEqual([bad.messageId])
    expect(ran.sort()).toEqual([before.messageId, after.messageId].sort())
    // The three claims were one command; the two completions another.
    expect(sent).toEqual(['EVALSHA', 'EVALSHA'])
    expect(outcomes.find((o) => o.id === bad.messageId)).toMatchObject({ kind: 'store-error', error: expect.objectContaining({ message: expect.stringMatching(/WRONGTYPE/) }) })
    expect(await raw.hGetAll(`${keyPrefix}${badKey}`)).toEqual({ owner: 'another application' })
  })
})
