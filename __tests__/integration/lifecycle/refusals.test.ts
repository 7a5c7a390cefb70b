import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { TransactWriteItemsCommand, type DynamoDBClient as Client } from '@aws-sdk/client-dynamodb'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyTransactError, perRecord, type OutcomeReport, type RecordTools } from '../../../src/index.js'
import { DynamoDBStore, transactions } from '../../../src/dynamodb.js'
import { freshTable, userTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import middy from '@middy/core'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
let orders: Awaited<ReturnType<typeof userTable>>
let ordersTable: string

beforeAll(async () => {
  table = await freshTable()
  orders = await userTable(table.client, 'orders-refusals', 'orderId')
  ordersTable = orders.tableName
})
afterAll(async () => {
  await orders.drop()
  await table.drop()
})

const statusesOf = async (namespace: string): Promise<unknown[]> => await table.statusesOf(namespace)

const consumer = (fn: (record: SQSRecord, tools: RecordTools) => Promise<unknown>, options: { client?: Client, onFailure?: 'fail' | 'delete' } = {}) => {
  const namespace = `refusal-${Math.random().toString(36).slice(2, 10)}`
  const outcomes: OutcomeReport[] = []
  const store = new DynamoDBStore({ tableName: table.tableName, client: options.client ?? table.client, transactions })
  const handler = middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace, onFailure: options.onFailure ?? 'delete', logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) } }))
    .handler(perRecord(fn) as never)
  return { namespace, outcomes, run: async (records: SQSRecord[]) => await (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent(records), lambdaContext()) }
}

describe('a transact commit DynamoDB refuses as invalid applied nothing: the record fails for good, never keeps its lease', () => {
  test('an item over 400 KB: ValidationException, the record is kept FAILED (its work may have had other effects), its neighbour completes', async () => {
    const { namespace, outcomes, run } = consumer(async (record, { transact }) => {
      const { orderId, big } = JSON.parse(record.body) as { orderId: string, big: boolean }
      transact({ Put: { TableName: ordersTable, Item: { orderId, note: big ? 'x'.repeat(410 * 1024) : 'ok' } } })
    })
    const big = sqsRecord({ orderId: `o-${Math.random()}`, big: true })
    const fine = sqsRecord({ orderId: `o-${Math.random()}`, big: false })
    expect(failedIds(await run([big, fine]))).toEqual([big.messageId])
    expect((await statusesOf(namespace)).sort()).toEqual(['COMPLETED', 'FAILED'])
    const failed = outcomes.find((o) => o.kind === 'failed')
    expect(failed?.error).toBeInstanceOf(IdempotencyTransactError)
    expect((failed?.error as IdempotencyTransactError).code).toBe('ValidationException')
  })

  test('an entry with the wrong key attribute for the user\'s own table: IdempotencyTransactError naming the entry and its table, not the idempotency table\'s schema', async () => {
    const { namespace, outcomes, run } = consumer(async (record, { transact }) => {
      transact({ Update: { TableName: ordersTable, Key: { id: 'wrong-key-attribute' }, UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': 1 } } })
    }, { onFailure: 'delete' })
    const record = sqsRecord({ orderId: 'x' })
    expect(failedIds(await run([record]))).toEqual([record.messageId])
    // Invalid as it stands: kept FAILED (its work may have had effects outside transact), nothing left IN_PROGRESS.
    expect(await statusesOf(namespace)).toEqual(['FAILED'])
    const error = outcomes[0]?.error as IdempotencyTransactError
    expect(error).toBeInstanceOf(IdempotencyTransactError)
    expect(error.message).toContain(ordersTable)
    expect(error.message).not.toMatch(/key schema of table idempotency/)
    expect(error.entry).toBe(0)
  })
})

describe('a throttled TransactWriteItems (after the SDK\'s retries) applied nothing: the record is released', () => {
  test('ProvisionedThroughputExceededException on the commit: released (a redelivery runs it), reported failed', async () => {
    // Everything goes to DynamoDB Local except the commit, which is throttled: the one fault it cannot produce.
    const throttled = Object.assign(new Error('Throughput exceeds the current capacity of your table'), { name: 'ProvisionedThroughputExceededException', $fault: 'client', $metadata: { httpStatusCode: 400 } })
    const sender = { send: async (command: unknown) => command instanceof TransactWriteItemsCommand ? await Promise.reject(throttled) : await table.client.send(command as never) } as unknown as Client
    const { namespace, outcomes, run } = consumer(async (record, { transact }) => {
      transact({ Put: { TableName: ordersTable, Item: { orderId: `t-${Math.random()}` } } })
    }, { client: sender, onFailure: 'fail' })
    const record = sqsRecord({ n: 1 })
    expect(failedIds(await run([record]))).toEqual([record.messageId])
    expect(await statusesOf(namespace)).toEqual([])
    expect(outcomes[0]?.kind).toBe('failed')
  })
})

describe('throttled in the end after several attempts, a commit may have landed on an earlier one: it is read back, never released blindly', () => {
  const throttledAfter = (attempts: number) => Object.assign(new Error('Rate of requests exceeds the allowed throughput'), { name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400, attempts } })

  test('the first attempt landed and its answer was lost, the retries were throttled: the record is COMPLETED, reported done', async () => {
    const sender = { send: async (command: unknown) => {
      if (!(command instanceof TransactWriteItemsCommand)) return await table.client.send(command as never)
      await table.client.send(command)
      throw throttledAfter(3)
    } } as unknown as Client
    const { namespace, outcomes, run } = consumer(async (record, { transact }) => {
      transact({ Put: { TableName: ordersTable, Item: { orderId: `landed-${Math.random()}` } } })
    }, { client: sender, onFailure: 'fail' })
    const record = sqsRecord({ n: 1 })
    expect(failedIds(await run([record]))).toEqual([])
    expect(await statusesOf(namespace)).toEqual(['COMPLETED'])
    expect(outcomes[0]?.kind).toBe('completed')
  })

  test('no attempt landed (the record is still ours, IN_PROGRESS): released, reported failed', async () => {
    const sender = { send: async (command: unknown) => command instanceof TransactWriteItemsCommand ? await Promise.reject(throttledAfter(3)) : await table.client.send(command as never) } as unknown as Client
    const { namespace, run } = consumer(async (record, { transact }) => {
      transact({ Put: { TableName: ordersTable, Item: { orderId: `not-landed-${Math.random()}` } } })
    }, { client: sender, onFailure: 'fail' })
    const record = sqsRecord({ n: 2 })
    expect(failedIds(await run([record]))).toEqual([record.messageId])
    expect(await statusesOf(namespace)).toEqual([])
  })
})

describe('a stored error is bounded whatever its message', () => {
  test('onFailure \'fail\' with a 480 KB message: the record is kept FAILED with a truncated message, never left IN_PROGRESS', async () => {
    const { namespace, run } = consumer(async () => { throw Object.assign(new Error('x'.repeat(480 * 1024)), { name: 'GatewayError', code: 'E_GATEWAY' }) }, { onFailure: 'fail' })
    const record = sqsRecord({ n: 1 })
    expect(failedIds(await run([record]))).toEqual([record.messageId])
    const items = (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
    expect(items.map((i) => i.status)).toEqual(['FAILED'])
    const stored = items[0]?.error as { name: { S: string }, message: { S: string }, code?: { S: string } }
    expect(stored.name.S).toBe('GatewayError')
    expect(stored.code?.S).toBe('E_GATEWAY')
    expect(stored.message.S.length).toBeLessThanOrEqual(1024)
    expect(stored.message.S).toMatch(/truncated/)
  })
})
