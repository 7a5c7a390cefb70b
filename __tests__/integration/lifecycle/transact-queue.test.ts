import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import middy from '@middy/core'
import type { APIGatewayProxyEventV2, SQSEvent, SQSRecord } from 'aws-lambda'
import {
  idempotency, IdempotencyConfigError, perRecord, type IdempotencyContext, type RecordTools
} from '../../../src/index.js'
import type { TransactItem } from '../../../src/store.js'
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

// `transact` queues a unit's writes where it is called (src/lifecycle/transact-queue.ts): a call the
// store cannot commit is refused there, and the refusal fails the unit even when the function
// catches it, so that nothing completes without the writes it meant to commit.
describe('a refused transact fails its unit and writes nothing, caught by the function or not', () => {
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
})
