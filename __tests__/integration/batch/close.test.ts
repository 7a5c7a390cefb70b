import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord, type RecordTools } from '../../../src/index.js'
import type { TransactItem } from '../../../src/store.js'
import { DynamoDBStore, transactions } from '../../../src/dynamodb.js'
import { deferred } from '../../support/deferred.js'
import { freshTable, userTable, freshNamespace } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const statusesOf = async (namespace: string): Promise<unknown[]> => await table.statusesOf(namespace)

type Invoke = (event: unknown, context: unknown) => Promise<unknown>
const fresh = freshNamespace

describe.each(batchMiddyVersions)('how a batch closes, %s', (_name, middy) => {
  test('Middy\'s early timeout fires well before timeoutMarginMs (1.5 s ahead, margin 1 s): a record whose work rejects on the abort keeps its lease, under onFailure \'fail\'', async () => {
    const namespace = fresh('early')
    const runs: Array<Promise<unknown>> = []
    const inner = perRecord<SQSEvent>(async (_record, { signal }) => {
      // A request given the signal: the abort stops the wait, not the request.
      await new Promise((_resolve, reject) => { signal.addEventListener('abort', () => { reject(signal.reason) }) })
    })
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 1500 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event, context, options) => { const run = inner(event, context, options); runs.push(run); return await run })
    const records = [sqsRecord({ n: 1 })]
    const deadline = Date.now() + 2000
    const answer = await (handler as unknown as Invoke)(sqsEvent(records), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    expect(failedIds(answer)).toEqual([records[0]?.messageId])
    await Promise.all(runs)
    expect(await statusesOf(namespace)).toEqual(['IN_PROGRESS'])
  })

  test('the handler throws while a record perRecord started is still running: that record stays IN_PROGRESS, and completes when its work ends', async () => {
    const namespace = fresh('running')
    const started = deferred()
    const finish = deferred()
    const runs: Array<Promise<unknown>> = []
    const inner = perRecord<SQSEvent>(async () => {
      started.resolve()
      await finish.promise
      return 'charged'
    })
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event, context, options) => {
        runs.push(inner(event, context, options))
        await started.promise
        throw new Error('the handler gave up while its record was running')
      })
    const records = [sqsRecord({ n: 1 })]
    const answer = await (handler as unknown as Invoke)(sqsEvent(records), lambdaContext()).catch((error: unknown) => error)
    expect(failedIds(answer)).toEqual([records[0]?.messageId])
    expect(await statusesOf(namespace)).toEqual(['IN_PROGRESS'])
    finish.resolve()
    await Promise.all(runs)
    expect(await statusesOf(namespace)).toEqual(['COMPLETED'])
  })
})

describe("how a batch closes: transact under Middy's early timeout", () => {
  let orders: Awaited<ReturnType<typeof userTable>>
  beforeAll(async () => { orders = await userTable(table.client, 'orders', 'orderId') })
  afterAll(async () => { await orders.drop() })

  const uid = (): string => Math.random().toString(36).slice(2, 10)
  const orderOf = async (orderId: string) => (await table.client.send(new GetItemCommand({ TableName: orders.tableName, Key: { orderId: { S: orderId } }, ConsistentRead: true }))).Item
  const counter = async (orderId: string): Promise<number> => Number((await orderOf(orderId))?.count?.N ?? 0)
  /** One write a double run would show: the order's count goes up by one per applied commit. */
  const countOrder = (orderId: string): TransactItem => ({
    Update: { TableName: orders.tableName, Key: { orderId }, UpdateExpression: 'ADD #count :one', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':one': 1 } }
  })

  test('a record still running when the timeout fires is reported failed, commits its writes once when its work ends, and its redelivery replays', async () => {
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
