import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { CreateTableCommand, DeleteTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyConfigError, IdempotencyPayloadMismatchError, IdempotencyTransactError, MemoryStore, perRecord, type RecordTools } from '../../src/index.js'
import { idempotency as batchIdempotency, perRecord as batchPerRecord } from '../../src/batch.js'
import { DynamoDBStore, transactions } from '../../src/dynamodb.js'
import { countingClient, freshTable } from '../support/dynamodb.js'
import { middyVersions, sqsPartialBatchFailure } from '../support/middy.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
const ledger = `ledger-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
beforeAll(async () => {
  table = await freshTable()
  await table.client.send(new CreateTableCommand({ TableName: ledger, KeySchema: [{ AttributeName: 'account', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'account', AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' }))
})
afterAll(async () => {
  await table.client.send(new DeleteTableCommand({ TableName: ledger }))
  await table.drop()
})

const uid = (): string => Math.random().toString(36).slice(2, 10)
const balanceOf = async (account: string): Promise<number> =>
  Number((await table.client.send(new GetItemCommand({ TableName: ledger, Key: { account: { S: account } }, ConsistentRead: true }))).Item?.balance?.N ?? 0)

/** A store whose client counts the commands it sends. */
const counted = () => {
  const { client, sent } = countingClient()
  return { store: new DynamoDBStore({ tableName: table.tableName, client, transactions }), sent }
}

/** Credits an account: its only effect is the transact write (with an optional cap). */
const credit = async (record: SQSRecord, { transact }: RecordTools): Promise<unknown> => {
  const { account, amount, cap } = JSON.parse(record.body) as { account: string, amount: number, cap?: number }
  transact({
    Update: {
      TableName: ledger,
      Key: { account },
      UpdateExpression: 'ADD balance :amount',
      ...(cap === undefined ? {} : { ConditionExpression: 'attribute_not_exists(balance) OR balance < :cap', ExpressionAttributeValues: { ':amount': amount, ':cap': cap } }),
      ...(cap === undefined ? { ExpressionAttributeValues: { ':amount': amount } } : {})
    }
  })
  return { credited: amount }
}

describe.each(middyVersions)("effects: 'transact-only' against DynamoDB Local, %s", (_name, middy) => {
  const consumer = (options: { namespace?: string, now?: () => number } = {}, fn = credit) => {
    const { store, sent } = counted()
    const reasons: unknown[] = []
    const ran: string[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store, namespace: options.namespace ?? `only-${uid()}`, key: 'body.paymentId', effects: 'transact-only', logger: false, ...(options.now === undefined ? {} : { now: options.now }) }))
      .handler(perRecord(async (record: SQSRecord, tools: RecordTools) => { ran.push(record.messageId); return await fn(record, tools) }))
    return { handler, sent, reasons, ran }
  }

  test('a new record costs one request: its TransactWriteItems of the effect and the COMPLETED record', async () => {
    const account = `acct-${uid()}`
    const { handler, sent } = consumer()
    expect(await handler(sqsEvent([sqsRecord({ paymentId: uid(), account, amount: 5 })]), lambdaContext())).toEqual({ batchItemFailures: [] })
    // Beside the store's one-time look at the table's TTL, made by its first request.
    expect(sent).toEqual(['DescribeTimeToLive', 'TransactWriteItems'])
    sent.length = 0
    expect(await handler(sqsEvent([sqsRecord({ paymentId: uid(), account, amount: 5 })]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(sent).toEqual(['TransactWriteItems'])
    expect(await balanceOf(account)).toBe(10)
    expect((await table.items()).filter((i) => i.status === 'COMPLETED' && i.responseData === '{"credited":5}')).not.toHaveLength(0)
  })

  test('8 concurrent invocations of one payment: one effect, every invocation answers success with its result', async () => {
    const account = `acct-${uid()}`
    const namespace = `only-${uid()}`
    const paymentId = uid()
    const invocations = Array.from({ length: 8 }, () => consumer({ namespace }))
    const answers = await Promise.all(invocations.map(async ({ handler }) => await handler(sqsEvent([sqsRecord({ paymentId, account, amount: 7 })]), lambdaContext())))
    expect(answers).toEqual(Array.from({ length: 8 }, () => ({ batchItemFailures: [] })))
    expect(await balanceOf(account)).toBe(7)
  })

  test('a redelivery is replayed from the bulk read without running; a producer duplicate runs but its commit replays the first', async () => {
    const account = `acct-${uid()}`
    const { handler, ran, sent } = consumer()
    const record = sqsRecord({ paymentId: uid(), account, amount: 3 })
    await handler(sqsEvent([record]), lambdaContext())
    ran.length = 0
    sent.length = 0
    expect(await handler(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(ran).toEqual([])
    expect(sent).toEqual(['BatchGetItem'])
    const copy = sqsRecord(JSON.parse(record.body))
    expect(await handler(sqsEvent([copy]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(ran).toEqual([copy.messageId])
    expect(await balanceOf(account)).toBe(3)
  })

  test('a refused condition applies nothing, stores nothing, and names the entry', async () => {
    const account = `acct-${uid()}`
    const { handler, reasons } = consumer()
    await handler(sqsEvent([sqsRecord({ paymentId: uid(), account, amount: 10, cap: 10 })]), lambdaContext())
    const refused = sqsRecord({ paymentId: uid(), account, amount: 10, cap: 10 })
    expect(failedIds(await handler(sqsEvent([refused]), lambdaContext()))).toEqual([refused.messageId])
    expect(reasons[0]).toBeInstanceOf(IdempotencyTransactError)
    expect((reasons[0] as IdempotencyTransactError).entry).toBe(0)
    expect(await balanceOf(account)).toBe(10)
  })

  test('the same key with another payload is refused as a mismatch and applies nothing', async () => {
    const account = `acct-${uid()}`
    const { handler, reasons } = consumer()
    const paymentId = uid()
    await handler(sqsEvent([sqsRecord({ paymentId, account, amount: 1 })]), lambdaContext())
    const other = sqsRecord({ paymentId, account, amount: 1000 })
    expect(failedIds(await handler(sqsEvent([other]), lambdaContext()))).toEqual([other.messageId])
    expect(reasons[0]).toBeInstanceOf(IdempotencyPayloadMismatchError)
    expect(await balanceOf(account)).toBe(1)
  })

  test('once the record expires, the same payment commits again', async () => {
    let nowMs = Date.now()
    const account = `acct-${uid()}`
    const { handler } = consumer({ now: () => nowMs })
    const body = { paymentId: uid(), account, amount: 2 }
    await handler(sqsEvent([sqsRecord(body)]), lambdaContext())
    nowMs += 2 * 3600 * 1000
    expect(await handler(sqsEvent([sqsRecord(body)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(await balanceOf(account)).toBe(4)
  })

  test('a handler that is not perRecord is refused: its effects could not be transact writes', async () => {
    const { store } = counted()
    const handler = middy<SQSEvent>()
      .use(idempotency({ store, effects: 'transact-only', logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async () => 'done')))
    await expect(handler(sqsEvent([sqsRecord('x')]), lambdaContext())).rejects.toThrow(/effects: 'transact-only' needs the handler to be perRecord/)
  })
})

test("effects: 'transact-only' with a DynamoDBStore built without transactions is refused at construction, saying what to write", () => {
  const store = new DynamoDBStore({ tableName: 'IdempotencyStore', client: table.client })
  expect(() => idempotency({ store, effects: 'transact-only' })).toThrow(IdempotencyConfigError)
  expect(() => idempotency({ store, effects: 'transact-only' })).toThrow("idempotency: effects: 'transact-only' needs a store that commits transactions with the record's completion; " +
    "this DynamoDBStore was built without them: write new DynamoDBStore({ ..., transactions }), with import { DynamoDBStore, transactions } from 'middy-idempotency/dynamodb'")
})

test("effects: 'transact-only' needs a store that commits: refused at construction", () => {
  expect(() => idempotency({ store: new MemoryStore(), effects: 'transact-only' })).toThrow(IdempotencyConfigError)
  expect(() => idempotency({ store: new MemoryStore(), effects: 'transact-only' })).toThrow(/needs a store that commits transactions/)
})

test("effects: 'transact-only' from middy-idempotency/batch without transactions is refused at construction", () => {
  const store = new DynamoDBStore({ tableName: table.tableName, client: table.client })
  expect(() => batchIdempotency({ store, effects: 'transact-only' })).toThrow(/this DynamoDBStore was built without them: write new DynamoDBStore\(\{ \.\.\., transactions \}\)/)
  expect(typeof batchPerRecord).toBe('function')
})
