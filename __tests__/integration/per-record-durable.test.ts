import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { DurableContext, DurableLambdaHandler } from '@aws/durable-execution-sdk-js'
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import middy7Module from '@middy/core'
import { executionModeDurableContext } from '@middy/core/DurableContext'
import * as batchOnly from '../../src/batch.js'
import { idempotency, perRecord } from '../../src/index.js'
import { sqsPartialBatchFailure } from '../support/middy.js'
import { recordingLogger, sqsEvent, sqsRecord } from '../support/sqs.js'
import { integrationStores } from '../support/stores.js'

// An SQS event source mapping into a durable function: every delivery, retries included, starts
// a new execution (https://docs.aws.amazon.com/lambda/latest/dg/durable-execution-idempotency.html),
// and each execution is invoked again after every wait, replaying from the top.
const middy7 = middy7Module as unknown as (config: Record<string, unknown>) => {
  use: (middleware: unknown) => ReturnType<typeof middy7>
  handler: (fn: unknown) => DurableLambdaHandler
}

// Middy's early timeout is off, as docs/lambda-modes.md advises for durable functions.
const durableMode = { executionMode: executionModeDurableContext, timeoutEarlyInMillis: 0 }

beforeAll(async () => { await LocalDurableTestRunner.setupTestEnvironment() })
afterAll(async () => { await LocalDurableTestRunner.teardownTestEnvironment() })

// DynamoDB Local, and redis-server through one client (the store contract covers the others).
const stores = integrationStores.filter(([name]) => name === 'DynamoDBStore' || name === 'RedisStore (node-redis)')

// Whichever entry point that takes batches is imported, with its perRecord.
const entries: Array<[string, Pick<typeof batchOnly, 'idempotency' | 'perRecord'>]> = [['middy-idempotency', { idempotency, perRecord }], ['middy-idempotency/batch', batchOnly]]

describe.each(entries)('%s', (_entry, entry) => describe.each(stores)('perRecord in a durable function, %s', (_name, storeUnderTest) => {
  // With a local cache too: a record this execution finished is remembered COMPLETED, yet the
  // execution's replays must still hand it to the function.
  it.concurrent.each<[string, { localCacheSize?: number }]>([
    ['', {}],
    [' (with a local cache)', { localCacheSize: 100 }]
  ])('runs each record of an SQS batch once across the replays of its execution, a record\'s work with a wait; a new execution of the same batch replays every record%s', async (_with, cacheOptions) => {
    const table = await storeUnderTest()
    const charges: string[] = []
    /** A record charges (a step); a record that asks for it waits for its receipt (a wait, then a step). */
    const chargeCard = async (record: SQSRecord, { context }: { context: unknown }): Promise<string> => {
      const durable = context as DurableContext
      const order = JSON.parse(record.body) as { orderId: string, receipt: boolean }
      const charge = await durable.step(`charge ${order.orderId}`, async () => { charges.push(order.orderId); return `ch_${order.orderId}` })
      if (!order.receipt) return charge
      await durable.wait(`receipt delay ${order.orderId}`, { seconds: 1 })
      return await durable.step(`receipt ${order.orderId}`, async () => `receipt for ${charge}`)
    }
    const handlerFunction = middy7(durableMode)
      .use(sqsPartialBatchFailure())
      .use(entry.idempotency({ store: table.store, namespace: 'orders', logger: recordingLogger(), ...cacheOptions }))
      .handler(entry.perRecord(chargeCard))
    const event: SQSEvent = sqsEvent([
      sqsRecord({ orderId: 'o-1', receipt: true }),
      sqsRecord({ orderId: 'o-2', receipt: false }),
      sqsRecord({ orderId: 'o-3', receipt: true })
    ])

    const execution = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: event })
    expect(execution.getStatus()).toBe('SUCCEEDED')
    expect(execution.getInvocations().length).toBeGreaterThan(1)
    expect(execution.getResult()).toEqual({ batchItemFailures: [] })
    expect(charges.sort()).toEqual(['o-1', 'o-2', 'o-3'])
    const responses = (await table.records('orders')).map((record) => [record.status, record.responseData]).sort()
    expect(responses).toEqual([
      ['COMPLETED', JSON.stringify('ch_o-2')],
      ['COMPLETED', JSON.stringify('receipt for ch_o-1')],
      ['COMPLETED', JSON.stringify('receipt for ch_o-3')]
    ])

    // The event source mapping delivers the batch again: a new execution, which runs nothing.
    const retry = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: event })
    expect(retry.getStatus()).toBe('SUCCEEDED')
    expect(retry.getResult()).toEqual({ batchItemFailures: [] })
    expect(retry.getOperations()).toHaveLength(0)
    expect(charges).toHaveLength(3)
    await table.close()
  })
  it.concurrent('the same order twice in one batch, its work with a wait: it runs once across the replays, and both records succeed', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const chargeCard = async (record: SQSRecord, { context }: { context: unknown }): Promise<string> => {
      const durable = context as DurableContext
      const order = JSON.parse(record.body) as { orderId: string }
      const charge = await durable.step(`charge ${record.messageId}`, async () => { charges.push(order.orderId); return `ch_${order.orderId}` })
      await durable.wait(`settle ${record.messageId}`, { seconds: 1 })
      return charge
    }
    const handlerFunction = middy7(durableMode)
      .use(sqsPartialBatchFailure())
      .use(entry.idempotency({ store: table.store, namespace: 'orders-twice', key: 'body.orderId', logger: recordingLogger() }))
      .handler(entry.perRecord(chargeCard))
    const execution = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: sqsEvent([sqsRecord({ orderId: 'o-7' }), sqsRecord({ orderId: 'o-7' })]) })
    expect(execution.getStatus()).toBe('SUCCEEDED')
    expect(execution.getInvocations().length).toBeGreaterThan(1)
    expect(execution.getResult()).toEqual({ batchItemFailures: [] })
    expect(charges).toEqual(['o-7'])
    expect((await table.records('orders-twice')).map((record) => [record.status, record.responseData])).toEqual([['COMPLETED', JSON.stringify('ch_o-7')]])
    await table.close()
  })
}))
