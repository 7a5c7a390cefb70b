import { afterAll, describe, expect, test, beforeAll } from '@jest/globals'
import middy from '@middy/core'
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import {
  idempotency, IdempotencyConfigError, perRecord, type RecordTools
} from '../../../src/index.js'
import type { TransactItem } from '../../../src/store.js'
import { DynamoDBStore, transactions } from '../../../src/dynamodb.js'
import type { ClaimRecord } from '../../../src/stores/store.js'
import { freshTable, localClient, userTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

/** Records every command the client sends, with its input: what DESIGN §2 says each step costs. */
const recordRequests = (client: DynamoDBClient) => {
  const sent: Array<{ command: string, input: Record<string, unknown> }> = []
  client.middlewareStack.add((next, context) => async (args) => {
    sent.push({ command: String(context.commandName), input: args.input as Record<string, unknown> })
    return await next(args)
  }, { step: 'initialize', name: 'recordRequests' })
  return sent
}

// Whole seconds, so that "NOW + 10_999 ms" is still within the 10th second.
const NOW = Math.floor(Date.now() / 1000) * 1000
const claimRecord = (key: string, token: string, leaseMs = 30_000): ClaimRecord => ({
  key, status: 'IN_PROGRESS', expiry: Math.floor(NOW / 1000) + 3600, inProgressExpiry: NOW + leaseMs, leaseToken: token, payloadHash: 'hash'
})

describe('DynamoDBStore on DynamoDB Local', () => {
  let table: Awaited<ReturnType<typeof freshTable>>
  let sent: ReturnType<typeof recordRequests>
  beforeAll(async () => {
    const client = localClient()
    sent = recordRequests(client)
    table = await freshTable({ client })
  })

  test('a claim is one conditional PutItem; a refused claim returns the standing record in the same request', async () => {
    // The store's first request looks at the table's TTL once (table-check.ts); every later claim is one request.
    await table.store.claim(claimRecord('k-first', 'a'), NOW)
    sent.length = 0
    expect(await table.store.claim(claimRecord('k-claim', 'a'), NOW)).toBeUndefined()
    const standing = await table.store.claim(claimRecord('k-claim', 'b'), NOW)
    expect(standing).toEqual({ key: 'k-claim', status: 'IN_PROGRESS', expiry: Math.floor(NOW / 1000) + 3600, inProgressExpiry: NOW + 30_000, leaseToken: 'a', payloadHash: 'hash' })
    expect(sent.map((s) => s.command)).toEqual(['PutItemCommand', 'PutItemCommand'])
    expect(sent[0]?.input).toMatchObject({
      ConditionExpression: 'attribute_not_exists(#key) OR #expiry < :nowSeconds OR (#status = :inProgress AND #lease < :nowMs)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD'
    })
  })

  test('completion, failure and release are fenced by the lease token: a stale owner can neither overwrite nor delete', async () => {
    await table.store.claim(claimRecord('k-fence', 'stale', 0), NOW)
    expect(await table.store.claim(claimRecord('k-fence', 'fresh'), NOW + 1)).toBeUndefined()
    sent.length = 0
    expect(await table.store.complete('k-fence', 'stale', { expiry: 1, responseData: '"stale"' })).toBe(false)
    expect(await table.store.fail('k-fence', 'stale', { expiry: 1, error: { name: 'E', message: 'stale' } })).toBe(false)
    expect(await table.store.release('k-fence', 'stale')).toBe(false)
    expect(sent.map((s) => [s.command, s.input.ConditionExpression])).toEqual([
      ['UpdateItemCommand', '#token = :token'], ['UpdateItemCommand', '#token = :token'], ['DeleteItemCommand', '#token = :token']
    ])
    expect((await table.store.read(['k-fence'])).get('k-fence')).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'fresh' })
    expect(await table.store.complete('k-fence', 'fresh', { expiry: 7, responseData: '{"ok":true}' })).toBe(true)
    expect((await table.items()).find((i) => i.idempotencyKey === 'k-fence')).toMatchObject({ status: 'COMPLETED', responseData: '{"ok":true}', expiry: 7 })
  })

  test('an expired COMPLETED record (seconds) and a lapsed lease (milliseconds) can be claimed again', async () => {
    await table.store.claim(claimRecord('k-exp', 'a'), NOW)
    await table.store.complete('k-exp', 'a', { expiry: Math.floor(NOW / 1000) + 10 })
    expect(await table.store.claim(claimRecord('k-exp', 'b'), NOW + 10_999)).toMatchObject({ status: 'COMPLETED' })
    expect(await table.store.claim(claimRecord('k-exp', 'b'), NOW + 11_000)).toBeUndefined()
    await table.store.claim(claimRecord('k-lease', 'a', 5), NOW)
    expect(await table.store.claim(claimRecord('k-lease', 'b'), NOW + 5)).toMatchObject({ leaseToken: 'a' })
    expect(await table.store.claim(claimRecord('k-lease', 'b'), NOW + 6)).toBeUndefined()
  })

  test('read is one consistent BatchGetItem per 100 keys', async () => {
    const keys = Array.from({ length: 150 }, (_, i) => `k-read-${i}`)
    await Promise.all(keys.slice(0, 120).map(async (k) => await table.store.claim(claimRecord(k, 't'), NOW)))
    sent.length = 0
    const found = await table.store.read(keys)
    expect(found.size).toBe(120)
    expect(sent.map((s) => s.command)).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand'])
    expect(Object.values(sent[0]?.input.RequestItems as Record<string, { ConsistentRead: boolean }>)[0]?.ConsistentRead).toBe(true)
  })

  test('through the middleware: a batch of 20 new records costs 2 grouped requests (40 single-item ones without grouping), a redelivered batch of 20 costs one read', async () => {
    const grouped = middy<SQSEvent>()
      .use(idempotency({ store: table.store, namespace: 'costs', logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async () => 'ok')))
    const records = Array.from({ length: 20 }, (_, i) => sqsRecord({ i }))
    sent.length = 0
    await grouped(sqsEvent(records), lambdaContext())
    // One request of 20 INSERTs (the claims), one of 20 UPDATEs (the completions).
    expect(sent.map((s) => [s.command, (s.input.Statements as unknown[]).length])).toEqual([['BatchExecuteStatementCommand', 20], ['BatchExecuteStatementCommand', 20]])
    sent.length = 0
    await grouped(sqsEvent(records.map(redelivered)), lambdaContext())
    expect(sent.map((s) => s.command)).toEqual(['BatchGetItemCommand'])

    const single = middy<SQSEvent>()
      .use(idempotency({ store: new DynamoDBStore({ tableName: table.tableName, client: table.client, groupWrites: false }), namespace: 'costs-single', logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async () => 'ok')))
    sent.length = 0
    await single(sqsEvent(records), lambdaContext())
    // A new store looks at the table's TTL once (table-check.ts), beside its first claim.
    const writes = sent.filter((s) => s.command !== 'DescribeTimeToLiveCommand')
    expect(writes.filter((s) => s.command === 'PutItemCommand')).toHaveLength(20)
    expect(writes.filter((s) => s.command === 'UpdateItemCommand')).toHaveLength(20)
    expect(writes).toHaveLength(40)
  })
})

describe('DynamoDBStore table shapes and clients', () => {
  test('a DynamoDBDocumentClient is accepted and items stay plain attribute values', async () => {
    const base = localClient()
    const table = await freshTable({ client: base })
    const store = new DynamoDBStore({ tableName: table.tableName, client: DynamoDBDocumentClient.from(base) })
    expect(await store.claim(claimRecord('doc', 't'), NOW)).toBeUndefined()
    expect(await store.complete('doc', 't', { expiry: 5, responseData: '[1,2]' })).toBe(true)
    expect(await table.items()).toEqual([expect.objectContaining({ idempotencyKey: 'doc', status: 'COMPLETED', responseData: '[1,2]' })])
  })

  test('a single-table design with a sort key and custom attribute names', async () => {
    const table = await freshTable({ keyAttr: 'pk', sortKeyAttr: 'sk' })
    const store = new DynamoDBStore({
      tableName: table.tableName,
      client: table.client,
      keyAttr: 'pk',
      sortKeyAttr: 'sk',
      sortKeyValue: 'IDEMPOTENCY',
      statusAttr: 'state',
      expiryAttr: 'ttl',
      leaseTokenAttr: 'owner',
      responseDataAttr: 'result'
    })
    const handler = middy<SQSEvent>()
      .use(idempotency({ store, namespace: 'single-table', logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async () => ({ ok: 1 }))))
    const record = sqsRecord('x')
    await handler(sqsEvent([record]), lambdaContext())
    expect(await handler(sqsEvent([redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    const [item] = await table.items()
    expect(item).toMatchObject({ sk: 'IDEMPOTENCY', state: 'COMPLETED', result: '{"ok":1}' })
    expect(Object.keys(item ?? {}).sort()).toEqual(['inProgressExpiry', 'owner', 'payloadHash', 'pk', 'result', 'sk', 'state', 'ttl'])
  })
})

describe('DynamoDBStore with transactions', () => {
  let table: Awaited<ReturnType<typeof freshTable>>
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
  const sqsConsumer = (store: DynamoDBStore, namespace: string, fn: (record: SQSRecord, tools: RecordTools) => Promise<unknown>) => middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace, logger: false }))
    .handler(perRecord(fn) as never) as unknown as (event: SQSEvent, context: unknown) => Promise<unknown>

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
})
