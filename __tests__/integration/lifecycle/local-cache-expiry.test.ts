import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { countingClient, freshTable } from '../../support/dynamodb.js'
import { middy7, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

// A warm instance's local cache holds COMPLETED records until their expiry, and not a moment
// longer: past `expiresAfterSeconds` the key protects nothing, and its work runs again.

const counting = countingClient()
type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable({ client: counting.client }) })
afterAll(async () => { await table.drop() })

const EXPIRES_AFTER_SECONDS = 60
type Invoke = (event: unknown, context: unknown) => Promise<unknown>

describe('the local cache of a warm instance, @middy/core 7, on DynamoDB Local', () => {
  test('a redelivered SQS record is replayed from the cache until its expiry, and runs again after it', async () => {
    // In the future, so that DynamoDB Local's TTL (which deletes what expired by the machine's clock) leaves the records be.
    let nowMs = Date.UTC(2030, 0, 1)
    const charges: string[] = []
    const handler = middy7<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({
        store: table.store, namespace: `cache-${Math.random().toString(36).slice(2, 10)}`, localCacheSize: 10,
        expiresAfterSeconds: EXPIRES_AFTER_SECONDS, now: () => nowMs, logger: recordingLogger()
      }))
      .handler(perRecord(async (record: SQSRecord) => {
        charges.push(record.messageId)
        return { charged: charges.length }
      }))
    const invoke = async (record: SQSRecord): Promise<unknown> =>
      await (handler as unknown as Invoke)(sqsEvent([record]), lambdaContext())
    const record = sqsRecord({ orderId: 'o-1' })
    await invoke(record)
    expect(charges).toHaveLength(1)

    // Within its expiry: replayed from the cache, without a request to the table.
    nowMs += (EXPIRES_AFTER_SECONDS - 1) * 1000
    counting.sent.length = 0
    const replay = await invoke(redelivered(record))
    expect(failedIds(replay)).toEqual([])
    expect(counting.sent).toEqual([])
    expect(charges).toHaveLength(1)

    // Past its expiry: the cache no longer answers, and the work runs again.
    nowMs += 2000
    const rerun = await invoke(redelivered(redelivered(record)))
    expect(failedIds(rerun)).toEqual([])
    expect(charges).toEqual([record.messageId, record.messageId])
  })

  test('a whole event seen again after its expiry runs again', async () => {
    // In the future, so that DynamoDB Local's TTL (which deletes what expired by the machine's clock) leaves the records be.
    let nowMs = Date.UTC(2030, 0, 1)
    let runs = 0
    const handler = middy7<{ orderId: string }>()
      .use(idempotency({
        store: table.store,
        namespace: `cache-event-${Math.random().toString(36).slice(2, 10)}`,
        key: 'orderId',
        localCacheSize: 10,
        expiresAfterSeconds: EXPIRES_AFTER_SECONDS, now: () => nowMs, logger: recordingLogger()
      }))
      .handler(async () => ({ run: ++runs }))
    const invoke = async (): Promise<unknown> =>
      await (handler as unknown as Invoke)({ orderId: 'o-2' }, lambdaContext())
    expect(await invoke()).toEqual({ run: 1 })
    counting.sent.length = 0
    expect(await invoke()).toEqual({ run: 1 })
    // Answered from the cache.
    expect(counting.sent).toEqual([])
    nowMs += (EXPIRES_AFTER_SECONDS + 1) * 1000
    expect(await invoke()).toEqual({ run: 2 })
  })
})
