import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import middy from '@middy/core'
import type { APIGatewayProxyEventV2, SQSEvent, SQSRecord } from 'aws-lambda'
import {
  idempotency, IdempotencyConfigError, perRecord, type IdempotencyContext, type RecordTools
} from '../../../src/index.js'
import type { TransactItem } from '../../../src/store.js'
import { idempotency as batchIdempotency, perRecord as batchPerRecord } from '../../../src/batch.js'
import { DynamoDBStore, transactions } from '../../../src/dynamodb.js'
import { freshTable, userTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { httpApiEvent } from '../../support/http.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
let orders: Awaited<ReturnType<typeof userTable>>

beforeAll(async () => {
  table = await freshTable()
  orders = await userTable(table.client, 'orders', 'orderId')
})
afterAll(async () => {
  await orders.drop()
  await table.drop()
})

const uid = (): string => Math.random().toString(36).slice(2, 10)
const orderOf = async (orderId: string) => (await table.client.send(new GetItemCommand({ TableName: orders.tableName, Key: { orderId: { S: orderId } }, ConsistentRead: true }))).Item
const counter = async (orderId: string): Promise<number> => Number((await orderOf(orderId))?.count?.N ?? 0)
/** One write a double run would show: the order's count goes up by one per applied commit. */
const countOrder = (orderId: string): TransactItem => ({
  Update: { TableName: orders.tableName, Key: { orderId }, UpdateExpression: 'ADD #count :one', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':one': 1 } }
})
const recordsOf = async (namespace: string) => (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))

const sqsConsumer = (store: DynamoDBStore, namespace: string, fn: (record: SQSRecord, tools: RecordTools) => Promise<unknown>) => middy<SQSEvent>()
  .use(sqsPartialBatchFailure({ logger: false as never }))
  .use(idempotency({ store, namespace, logger: false }))
  .handler(perRecord(fn) as never) as unknown as (event: SQSEvent, context: unknown) => Promise<unknown>

describe('a careless user of transact', () => {
  test('forgets transactions: that record alone fails, nothing is written, no lock is left, and the redelivery after the fix commits exactly once', async () => {
    const namespace = `careless-${uid()}`
    const orderId = `o-${uid()}`
    const placing = async (record: SQSRecord, { transact }: RecordTools) => {
      const body = JSON.parse(record.body) as { orderId?: string }
      if (body.orderId !== undefined) transact(countOrder(body.orderId))
      return 'ok'
    }
    const broken = sqsConsumer(new DynamoDBStore({ tableName: table.tableName, client: table.client }), namespace, placing)
    const record = sqsRecord({ orderId })
    const neighbour = sqsRecord({ other: 1 })
    expect(failedIds(await broken(sqsEvent([record, neighbour]), lambdaContext()))).toEqual([record.messageId])
    expect(await orderOf(orderId)).toBeUndefined()
    // Only the neighbour's COMPLETED record: the failed one was released, no IN_PROGRESS left.
    expect((await recordsOf(namespace)).map((i) => i.status)).toEqual(['COMPLETED'])

    const fixed = sqsConsumer(new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace, placing)
    expect(await fixed(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(await fixed(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(await counter(orderId)).toBe(1)
  })

  test('forgets transactions and catches what transact throws: the record is not completed without its writes', async () => {
    const namespace = `careless-${uid()}`
    const orderId = `o-${uid()}`
    const reasons: unknown[] = []
    const store = new DynamoDBStore({ tableName: table.tableName, client: table.client })
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store, namespace, logger: false }))
      .handler(perRecord(async (record: SQSRecord, { transact }: RecordTools) => {
        // A handler that logs and carries on, as many do: the writes were never queued.
        try { transact(countOrder(JSON.parse(record.body).orderId as string)) } catch { /* logged elsewhere */ }
        return 'ok'
      }) as never) as unknown as (event: SQSEvent, context: unknown) => Promise<unknown>
    const record = sqsRecord({ orderId })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(reasons[0]).toBeInstanceOf(IdempotencyConfigError)
    expect((await recordsOf(namespace)).filter((i) => i.status === 'COMPLETED')).toEqual([])
  })

  test('catches the refusal of one invalid entry after queueing a valid one: nothing is written, the record fails with the entry named', async () => {
    const namespace = `careless-${uid()}`
    const orderId = `o-${uid()}`
    const reasons: unknown[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace, logger: false }))
      .handler(perRecord(async (record: SQSRecord, { transact }: RecordTools) => {
        transact(countOrder(JSON.parse(record.body).orderId as string))
        try { transact({ Insert: { TableName: orders.tableName, Item: { orderId: `${orderId}-bad` } } } as never) } catch { /* best effort */ }
        return 'ok'
      }) as never) as unknown as (event: SQSEvent, context: unknown) => Promise<unknown>
    const record = sqsRecord({ orderId })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect((reasons[0] as Error).message).toMatch(/^transact entry 1 is not an entry DynamoDBStore can write/)
    expect(await orderOf(orderId)).toBeUndefined()
    expect(await recordsOf(namespace)).toEqual([])
  })

  test('whole-event without transactions, the refusal caught by the handler: the event is not completed, and the key stays free', async () => {
    const namespace = `careless-${uid()}`
    const handler = middy<APIGatewayProxyEventV2>()
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client }), namespace, logger: false }))
      .handler(async (event, context) => {
        const { transact } = (context as unknown as { idempotency: IdempotencyContext }).idempotency
        try { transact(countOrder(JSON.parse(event.body ?? '{}').orderId as string)) } catch { /* logged elsewhere */ }
        return { statusCode: 201, body: 'placed' }
      })
    const event = httpApiEvent({ key: `k-${uid()}`, body: JSON.stringify({ orderId: `o-${uid()}` }) })
    await expect(handler(event, lambdaContext())).rejects.toThrow(IdempotencyConfigError)
    expect(await recordsOf(namespace)).toEqual([])
  })

  test('transactions: true or {} is refused when the store is built, naming the import', () => {
    for (const wrong of [true, {}, null, 'transactions']) {
      expect(() => new DynamoDBStore({ tableName: table.tableName, transactions: wrong as never }))
        .toThrow(new IdempotencyConfigError("DynamoDBStore: transactions must be the transactions exported by 'middy-idempotency/dynamodb'"))
    }
  })

  test('imports transactions but builds the store on a DynamoDBDocumentClient: the writes commit once, its removeUndefinedValues honoured', async () => {
    const namespace = `careless-${uid()}`
    const orderId = `o-${uid()}`
    const client = DynamoDBDocumentClient.from(table.client, { marshallOptions: { removeUndefinedValues: true } })
    const handler = sqsConsumer(new DynamoDBStore({ tableName: table.tableName, client, transactions }), namespace, async (record, { transact }) => {
      const { orderId: id } = JSON.parse(record.body) as { orderId: string }
      transact(countOrder(id), { Put: { TableName: orders.tableName, Item: { orderId: `${id}-note`, note: undefined } } })
      return 'ok'
    })
    const record = sqsRecord({ orderId })
    expect(await handler(sqsEvent([record]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(await handler(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(await counter(orderId)).toBe(1)
    expect(await orderOf(`${orderId}-note`)).toEqual({ orderId: { S: `${orderId}-note` } })
  })

  test('whole-event HTTP without transactions: the request fails with the IdempotencyConfigError, nothing is written, the key is free, and the retry after the fix commits once', async () => {
    const namespace = `careless-${uid()}`
    const orderId = `o-${uid()}`
    const http = (store: DynamoDBStore) => middy<APIGatewayProxyEventV2>()
      .use(idempotency({ store, namespace, logger: false }))
      .handler(async (event, context) => {
        const { transact } = (context as unknown as { idempotency: IdempotencyContext }).idempotency
        transact(countOrder(JSON.parse(event.body ?? '{}').orderId as string))
        return { statusCode: 201, body: 'placed' }
      })
    const event = httpApiEvent({ key: `k-${uid()}`, body: JSON.stringify({ orderId }) })
    await expect(http(new DynamoDBStore({ tableName: table.tableName, client: table.client }))(event, lambdaContext())).rejects.toThrow(IdempotencyConfigError)
    expect(await orderOf(orderId)).toBeUndefined()
    expect(await recordsOf(namespace)).toEqual([])
    const fixed = http(new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }))
    expect(await fixed(structuredClone(event), lambdaContext())).toMatchObject({ statusCode: 201 })
    expect(await fixed(structuredClone(event), lambdaContext())).toMatchObject({ statusCode: 201 })
    expect(await counter(orderId)).toBe(1)
  })

  test("effects: 'transact-only' from middy-idempotency/batch without transactions is refused at construction", () => {
    const store = new DynamoDBStore({ tableName: table.tableName, client: table.client })
    expect(() => batchIdempotency({ store, effects: 'transact-only' })).toThrow(/this DynamoDBStore was built without them: write new DynamoDBStore\(\{ \.\.\., transactions \}\)/)
    expect(typeof batchPerRecord).toBe('function')
  })
})

describe("transact under Middy's early timeout", () => {
  test('a record still running when the timeout fires is reported failed, commits its writes once when its work ends, and its redelivery replays', async () => {
    const { deferred } = await import('../../support/deferred.js')
    const namespace = `careless-${uid()}`
    const orderId = `o-${uid()}`
    const hang = deferred()
    const committed = deferred()
    const store = new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions })
    const commit = store.commit?.bind(store)
    if (commit === undefined) throw new Error('a store given transactions commits')
    type Commit = NonNullable<DynamoDBStore['commit']>
    const observed: Commit = async (...args: Parameters<Commit>) => { const done = await commit(...args); committed.resolve(); return done }
    Object.assign(store, { commit: observed })
    let runs = 0
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 29_850 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace, logger: false }))
      .handler(perRecord(async (record: SQSRecord, { transact }: RecordTools) => {
        runs++
        transact(countOrder(JSON.parse(record.body).orderId as string))
        await hang.promise
        return 'placed'
      }, { concurrency: 1 }) as never) as unknown as (event: SQSEvent, context: unknown) => Promise<unknown>
    const record = sqsRecord({ orderId })
    const later = sqsRecord({ orderId: `o-${uid()}` })
    // The timeout fires early, the lease runs to the deadline: the work ends well within it.
    const deadline = Date.now() + 30_000
    const answer = await handler(sqsEvent([record, later]), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    expect(failedIds(answer).sort()).toEqual([record.messageId, later.messageId].sort())
    expect(await orderOf(orderId)).toBeUndefined()
    hang.resolve()
    await committed.promise
    expect(await counter(orderId)).toBe(1)
    expect(await handler(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(runs).toBe(1)
    expect(await counter(orderId)).toBe(1)
  })
})
