import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { CreateTableCommand, DeleteTableCommand, GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { APIGatewayProxyEventV2, SQSEvent, SQSRecord } from 'aws-lambda'
import {
  idempotency, IdempotencyConfigError, IdempotencyLeaseLostError, IdempotencyTransactError, MemoryStore, perRecord,
  type IdempotencyContext, type IdempotencyOptions, type IdempotencyStore, type RecordTools
} from '../../src/index.js'
import type { TransactItem } from '../../src/store.js'
import { DynamoDBStore, transactions } from '../../src/dynamodb.js'
import { freshTable } from '../support/dynamodb.js'
import middy7 from '@middy/core'
import { middyVersions, sqsPartialBatchFailure } from '../support/middy.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
const ordersTable = `orders-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
const stockTable = `stock-${process.pid}-${Math.random().toString(36).slice(2, 8)}`

const createTable = async (client: DynamoDBClient, name: string, key: string): Promise<void> => {
  await client.send(new CreateTableCommand({ TableName: name, KeySchema: [{ AttributeName: key, KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' }))
}

beforeAll(async () => {
  table = await freshTable()
  await createTable(table.client, ordersTable, 'orderId')
  await createTable(table.client, stockTable, 'sku')
})
afterAll(async () => {
  await table.client.send(new DeleteTableCommand({ TableName: ordersTable }))
  await table.client.send(new DeleteTableCommand({ TableName: stockTable }))
  await table.drop()
})

const orderOf = async (orderId: string) => (await table.client.send(new GetItemCommand({ TableName: ordersTable, Key: { orderId: { S: orderId } }, ConsistentRead: true }))).Item
const reservedOf = async (sku: string) => Number((await table.client.send(new GetItemCommand({ TableName: stockTable, Key: { sku: { S: sku } }, ConsistentRead: true }))).Item?.reserved?.N ?? 0)

/** The order and its stock reservation: the two writes of one record. */
const placeOrder = (order: { orderId: string, sku: string, limit?: number }): TransactItem[] => [
  { Put: { TableName: ordersTable, Item: { orderId: order.orderId, sku: order.sku, placedAt: 1 }, ConditionExpression: 'attribute_not_exists(orderId)' } },
  {
    Update: {
      TableName: stockTable,
      Key: { sku: order.sku },
      UpdateExpression: 'ADD reserved :one',
      ConditionExpression: 'attribute_not_exists(reserved) OR reserved < :limit',
      ExpressionAttributeValues: { ':one': 1, ':limit': order.limit ?? 1000 }
    }
  }
]

const uid = (): string => Math.random().toString(36).slice(2, 10)

describe.each(middyVersions)('transact against DynamoDB Local, %s', (_name, middy) => {
  const consumer = (fn: (record: SQSRecord, tools: RecordTools) => Promise<unknown>, options: Partial<IdempotencyOptions> = {}, store: IdempotencyStore = new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions })) => {
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: `transact-${uid()}`, logger: false, ...options }))
      .handler(perRecord(fn) as never)
    return handler as unknown as (event: SQSEvent, context: unknown) => Promise<unknown>
  }
  const ordering = async (record: SQSRecord, { transact }: RecordTools) => {
    const order = JSON.parse(record.body) as { orderId: string, sku: string, limit?: number }
    transact(...placeOrder(order))
    return { placed: order.orderId }
  }

  test('the writes and COMPLETED land together; a redelivery replays without writing again', async () => {
    const sku = `sku-${uid()}`
    const record = sqsRecord({ orderId: `o-${uid()}`, sku })
    const handler = consumer(ordering)
    expect(await handler(sqsEvent([record]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(await orderOf(JSON.parse(record.body).orderId)).toBeDefined()
    expect(await reservedOf(sku)).toBe(1)
    const stored = (await table.items()).find((i) => i.status === 'COMPLETED' && i.responseData === JSON.stringify({ placed: JSON.parse(record.body).orderId }))
    expect(stored).toBeDefined()
    expect(await handler(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(await reservedOf(sku)).toBe(1)
  })

  test('a function that throws after queueing writes applies none of them', async () => {
    const sku = `sku-${uid()}`
    const record = sqsRecord({ orderId: `o-${uid()}`, sku })
    const handler = consumer(async (r, tools) => { await ordering(r, tools); throw new Error('the card was declined') })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(await orderOf(JSON.parse(record.body).orderId)).toBeUndefined()
    expect(await reservedOf(sku)).toBe(0)
  })

  test("one of the user's conditions fails: nothing applied, that record alone fails with the entry and reason, onFailure applies", async () => {
    const sku = `sku-${uid()}`
    const reasons: unknown[] = []
    const records = [sqsRecord({ orderId: `o-${uid()}`, sku, limit: 1 }), sqsRecord({ orderId: `o-${uid()}`, sku, limit: 1 })]
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace: `transact-${uid()}`, logger: false, onFailure: 'fail' }))
      .handler(perRecord(ordering, { concurrency: 1 }) as never)
    const answer = await handler(sqsEvent(records), lambdaContext())
    expect(failedIds(answer)).toEqual([records[1]?.messageId])
    const [reason] = reasons as IdempotencyTransactError[]
    expect(reason).toBeInstanceOf(IdempotencyTransactError)
    expect(reason?.entry).toBe(1)
    expect(reason?.code).toBe('ConditionalCheckFailed')
    expect(reason?.message).toMatch(/transact entry 1 was refused \(ConditionalCheckFailed\)/)
    expect(await orderOf(JSON.parse(records[1]?.body as string).orderId)).toBeUndefined()
    expect(await reservedOf(sku)).toBe(1)
    expect((await table.items()).filter((i) => i.status === 'FAILED' && (i.error as { name?: { S?: string } })?.name?.S === 'IdempotencyTransactError')).not.toHaveLength(0)
  })

  test('a stale owner whose lease was taken over applies none of its writes and reports a lost lease', async () => {
    let nowMs = Date.now()
    const sku = `sku-${uid()}`
    const record = sqsRecord({ orderId: `o-${uid()}`, sku })
    const store = new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions })
    const namespace = `transact-${uid()}`
    const reasons: unknown[] = []
    let release!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    let calls = 0
    const stale = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store, namespace, logger: false, now: () => nowMs }))
      .handler(perRecord(async (r: SQSRecord, tools: RecordTools) => { calls++; if (calls === 1) await gate; return await ordering(r, tools) }) as never)
    // Far from its deadline: a call inside timeoutMarginMs of it would be given up at half of what is left.
    const first = stale(sqsEvent([record]), lambdaContext())
    // Let the first claim land, then its lease lapse and a second invocation take the record over and finish it.
    while (calls === 0) await new Promise((resolve) => setImmediate(resolve))
    nowMs += 60_000
    expect(await stale(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    release()
    expect(failedIds(await first)).toEqual([record.messageId])
    expect(reasons[0]).toBeInstanceOf(IdempotencyLeaseLostError)
    expect(await reservedOf(sku)).toBe(1)
  })

  test('more than 99 entries fails the record with a clear error before anything is written', async () => {
    const record = sqsRecord({ orderId: `o-${uid()}` })
    const reasons: unknown[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace: `transact-${uid()}`, logger: false }))
      .handler(perRecord(async (_r: SQSRecord, { transact }: RecordTools) => {
        for (let i = 0; i < 100; i++) transact({ Put: { TableName: ordersTable, Item: { orderId: `bulk-${i}-${uid()}` } } })
      }) as never)
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(reasons[0]).toBeInstanceOf(IdempotencyTransactError)
    expect((reasons[0] as IdempotencyTransactError).code).toBe('TooManyItems')
    expect((reasons[0] as Error).message).toMatch(/100 writes for one unit of work, more than the 99/)
  })

  test('writes over 4 MB fail the record with a clear error before anything is written', async () => {
    const record = sqsRecord({ orderId: `o-${uid()}` })
    const reasons: unknown[] = []
    const big = 'x'.repeat(350 * 1024)
    const ids = Array.from({ length: 12 }, () => `big-${uid()}`)
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace: `transact-${uid()}`, logger: false }))
      .handler(perRecord(async (_r: SQSRecord, { transact }: RecordTools) => {
        for (const orderId of ids) transact({ Put: { TableName: ordersTable, Item: { orderId, big } } })
      }) as never)
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect((reasons[0] as IdempotencyTransactError).code).toBe('TooLarge')
    expect(await orderOf(ids[0] as string)).toBeUndefined()
  })

  test('binary attributes are sized as their bytes: 1.2 MB of Buffers commits (JSON would count them four times over)', async () => {
    const record = sqsRecord({ orderId: `o-${uid()}` })
    const reasons: unknown[] = []
    const scan = Buffer.alloc(300 * 1024, 200)
    const ids = Array.from({ length: 4 }, () => `scan-${uid()}`)
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace: `transact-${uid()}`, logger: false }))
      .handler(perRecord(async (_r: SQSRecord, { transact }: RecordTools) => {
        for (const orderId of ids) transact({ Put: { TableName: ordersTable, Item: { orderId, scan } } })
      }) as never)
    expect(await handler(sqsEvent([record]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(reasons).toEqual([])
    expect(await orderOf(ids[3] as string)).toBeDefined()
  })

  test('an entry that is not a TransactWriteItems entry is named where it is queued', async () => {
    const reasons: unknown[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace: `transact-${uid()}`, logger: false }))
      .handler(perRecord(async (_r: SQSRecord, { transact }: RecordTools) => { transact({ Insert: { TableName: ordersTable } } as never) }) as never)
    await handler(sqsEvent([sqsRecord('x')]), lambdaContext())
    expect((reasons[0] as Error).message).toMatch(/transact entry 0 is not an entry DynamoDBStore can write: it must have exactly one of Put, Update, Delete, ConditionCheck \(it has Insert\)/)
  })

  test('MemoryStore refuses transact with a clear error at the call', async () => {
    const reasons: unknown[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new MemoryStore(), logger: false }))
      .handler(perRecord(ordering) as never)
    const record = sqsRecord({ orderId: 'o', sku: 's' })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect((reasons[0] as Error).message).toMatch(/transact needs a store that commits transactions with the record's completion \(DynamoDBStore\); MemoryStore does not, so the writes would not be applied with it/)
  })

  test('a DynamoDBStore built without transactions fails the record at the transact call with an IdempotencyConfigError saying what to write, and leaves no record', async () => {
    const reasons: unknown[] = []
    const namespace = `transact-${uid()}`
    const orderId = `o-${uid()}`
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client }), namespace, logger: false }))
      .handler(perRecord(async (record: SQSRecord, { transact }: RecordTools) => { transact(...placeOrder(JSON.parse(record.body))) }) as never)
    const record = sqsRecord({ orderId, sku: `sku-${uid()}` })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(reasons[0]).toBeInstanceOf(IdempotencyConfigError)
    expect((reasons[0] as Error).message).toBe("transact needs a store that commits transactions with the record's completion; this DynamoDBStore was built without them: " +
      "write new DynamoDBStore({ ..., transactions }), with import { DynamoDBStore, transactions } from 'middy-idempotency/dynamodb'")
    expect(await orderOf(orderId)).toBeUndefined()
    expect((await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))).toEqual([])
  })
})

describe('transact: an SDK retry of a commit whose answer was lost', () => {
  test('succeeds through the ClientRequestToken, applies the writes once, and is not a false "lease lost"', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb')
    const { localClientConfig } = await import('../../scripts/dynamodb-local.mjs')
    const { endpoint } = await import('../support/dynamodb.js')
    const client = new DynamoDBClient({ ...localClientConfig(endpoint()), maxAttempts: 3 })
    const tokens: unknown[] = []
    let lost = 0
    // The first TransactWriteItems reaches the table, then its answer is lost: the SDK retries it.
    client.middlewareStack.add((next, context) => async (args) => {
      if ((context as { commandName?: string }).commandName !== 'TransactWriteItemsCommand') return await next(args)
      tokens.push((args.input as { ClientRequestToken?: string }).ClientRequestToken)
      const output = await next(args)
      if (lost++ === 0) throw Object.assign(new Error('socket timed out (injected)'), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} })
      return output
    }, { step: 'finalizeRequest', name: 'loseFirstCommitAnswer' })
    const sku = `sku-${uid()}`
    const record = sqsRecord({ orderId: `o-${uid()}`, sku })
    const reasons: unknown[] = []
    const { default: middy } = await import('@middy/core')
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason: unknown) => { reasons.push(reason) } }))
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client, transactions }), namespace: `transact-${uid()}`, logger: false }))
      .handler(perRecord(async (r: SQSRecord, { transact }: RecordTools) => {
        const order = JSON.parse(r.body) as { orderId: string, sku: string }
        transact(...placeOrder(order))
        return 'placed'
      }))
    expect(await handler(sqsEvent([record]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(reasons).toEqual([])
    expect(tokens).toHaveLength(2)
    expect(tokens[0]).toBe(tokens[1])
    expect(tokens[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(await reservedOf(sku)).toBe(1)
    client.destroy()
  })
})

describe.each(middyVersions)('transact in whole-event mode (context.idempotency), %s', (_name, middy) => {
  const orderHandler = () => middy<{ detail: { orderId: string, sku: string, limit?: number } }>()
    .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }), namespace: `event-${uid()}`, key: 'detail.orderId', logger: false }))
    .handler(async (event, context) => {
      const { key, transact } = (context as unknown as { idempotency: IdempotencyContext }).idempotency
      transact(...placeOrder(event.detail))
      return { placed: event.detail.orderId, key }
    })

  test('the writes commit with the completion; a duplicate event replays without writing again', async () => {
    const sku = `sku-${uid()}`
    const event = { detail: { orderId: `o-${uid()}`, sku } }
    const handler = orderHandler()
    const first = await handler(event, lambdaContext()) as { placed: string, key: string }
    expect(first.placed).toBe(event.detail.orderId)
    expect(first.key).toMatch(/^event-[a-z0-9]+#[0-9a-f]{64}$/)
    expect(await handler(structuredClone(event), lambdaContext())).toEqual(first)
    expect(await reservedOf(sku)).toBe(1)
  })

  test('a refused condition throws IdempotencyTransactError, applies nothing and releases the event', async () => {
    const sku = `sku-${uid()}`
    const handler = orderHandler()
    await handler({ detail: { orderId: `o-${uid()}`, sku, limit: 1 } }, lambdaContext())
    const refused = { detail: { orderId: `o-${uid()}`, sku, limit: 1 } }
    await expect(handler(refused, lambdaContext())).rejects.toBeInstanceOf(IdempotencyTransactError)
    expect(await orderOf(refused.detail.orderId)).toBeUndefined()
    expect(await reservedOf(sku)).toBe(1)
    // Released ('delete'): the same event runs again, and is refused again by the same condition.
    await expect(handler(refused, lambdaContext())).rejects.toBeInstanceOf(IdempotencyTransactError)
  })
})

describe('transact: a commit refused for certain, for a reason no retry passes', () => {
  /** A consumer that charges (an effect outside transact) and then queues a write to `tableName`. */
  const charging = (client: DynamoDBClient, tableName: string, charges: string[]) => middy7<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({
      store: new DynamoDBStore({ tableName: table.tableName, client, transactions }),
      namespace: `transact-${uid()}`,
      logger: false,
      onFailure: 'fail'
    }))
    .handler(perRecord(async (r: SQSRecord, { transact }: RecordTools) => {
      charges.push(r.messageId)
      transact({ Put: { TableName: tableName, Item: { orderId: r.messageId } } })
      return 'charged'
    }))

  test("a write to a table that does not exist (a typo): kept FAILED under onFailure 'fail', naming that table; a redelivery does not charge again", async () => {
    const charges: string[] = []
    const handler = charging(table.client, `ledgr-${uid()}`, charges)
    const record = sqsRecord({ n: 1 })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    const [stored] = (await table.items()).filter((i) => i.status === 'FAILED' && JSON.stringify(i.error).includes('ledgr-'))
    expect(stored).toBeDefined()
    expect(JSON.stringify(stored?.error)).toMatch(/ResourceNotFoundException/)
    expect(failedIds(await handler(sqsEvent([redelivered(record)]), lambdaContext()))).toEqual([record.messageId])
    expect(charges).toEqual([record.messageId])
  })

  // Errors DynamoDB answers before it applies anything, none of which a retry of the same request passes.
  test.each([
    ['a role that may not write to a table of the transaction', 'AccessDeniedException'],
    ['credentials DynamoDB does not know', 'UnrecognizedClientException'],
    ['a request whose signature is wrong', 'InvalidSignatureException']
  ])('%s (%s): kept FAILED, the work not run again', async (_what, name) => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb')
    const { localClientConfig } = await import('../../scripts/dynamodb-local.mjs')
    const { endpoint } = await import('../support/dynamodb.js')
    const client = new DynamoDBClient(localClientConfig(endpoint()))
    // Refusals DynamoDB Local (it checks no credentials or permissions) cannot be made to give.
    client.middlewareStack.add((next, context) => async (args) => {
      if ((context as { commandName?: string }).commandName !== 'TransactWriteItemsCommand') return await next(args)
      throw Object.assign(new Error(`refused (${name}, injected)`), { name, $fault: 'client', $metadata: { httpStatusCode: 400 } })
    }, { step: 'initialize', name: 'denyTransactions' })
    const charges: string[] = []
    const handler = charging(client, 'Ledger', charges)
    const record = sqsRecord({ n: 2 })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(failedIds(await handler(sqsEvent([redelivered(record)]), lambdaContext()))).toEqual([record.messageId])
    expect(charges).toEqual([record.messageId])
    const failed = (await table.items()).filter((i) => i.status === 'FAILED' && JSON.stringify(i.error).includes(name))
    expect(failed).toHaveLength(1)
    client.destroy()
  })
})

describe('transact over HTTP: a commit refused for certain', () => {
  test('the client is answered as its retries are, a 500 saying the key does not run the request again; the charge runs once', async () => {
    const { httpApiEvent } = await import('../support/http.js')
    const { default: httpErrorHandler } = await import('@middy/http-error-handler')
    const charges: string[] = []
    const handler = middy7<APIGatewayProxyEventV2>()
      .use(idempotency({
        store: new DynamoDBStore({ tableName: table.tableName, client: table.client, transactions }),
        namespace: `transact-http-${uid()}`,
        logger: false
      }))
      .use(httpErrorHandler({ logger: false }))
      .handler(async (_event, context) => {
        charges.push('charged')
        const { transact } = (context as unknown as { idempotency: IdempotencyContext }).idempotency
        transact({ Put: { TableName: `ledgr-${uid()}`, Item: { orderId: 'o-1' } } })
        return { statusCode: 201, body: '{"orderId":"o-1"}' }
      })
    const answers: Array<{ statusCode: number, body: string }> = []
    for (let i = 0; i < 2; i++) {
      answers.push(await handler(httpApiEvent({ key: 'k-transact' }), lambdaContext()) as { statusCode: number, body: string })
    }
    for (const answer of answers) {
      expect(answer.statusCode).toBe(500)
      expect(JSON.parse(answer.body)).toMatchObject({ status: 500, detail: expect.stringContaining('does not run the request again') })
    }
    expect(charges).toEqual(['charged'])
  })
})
