import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { KinesisStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

/** What Lambda reads of an answer: the Node.js runtime sends `JSON.stringify(response)`. */
const asLambdaReadsIt = (response: unknown): unknown => JSON.parse(JSON.stringify(response) ?? 'null')

const chargeSqs = async (record: SQSRecord): Promise<string> => {
  if (JSON.parse(record.body).fail === true) throw new Error('card declined')
  return 'charged'
}

describe.each(batchMiddyVersions)('the answer Lambda reads from perRecord, %s', (_name, middy) => {
  const run = async (handler: unknown, event: unknown): Promise<unknown> =>
    await (handler as (e: unknown, c: unknown) => Promise<unknown>)(event, lambdaContext())

  test('SQS with idempotency and without sqsPartialBatchFailure: Lambda reads { batchItemFailures } naming the failed record', async () => {
    const handler = middy<SQSEvent>()
      .use(idempotency({ store: table.store, namespace: `no-pbf-${Math.random()}`, logger: recordingLogger() }))
      .handler(perRecord(chargeSqs))
    const ok = sqsRecord({ id: 1 })
    const bad = sqsRecord({ id: 2, fail: true })
    expect(asLambdaReadsIt(await run(handler, sqsEvent([ok, bad])))).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
  })

  test('SQS without idempotency nor sqsPartialBatchFailure: the same answer', async () => {
    const handler = middy<SQSEvent>().handler(perRecord(chargeSqs))
    const ok = sqsRecord({ id: 1 })
    const bad = sqsRecord({ id: 2, fail: true })
    const response = await run(handler, sqsEvent([ok, bad]))
    expect(asLambdaReadsIt(response)).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
    // Still the Promise.allSettled shape for code that reads it.
    expect((response as Array<PromiseSettledResult<unknown>>).map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
  })

  test('SQS with sqsPartialBatchFailure outside: unchanged, exactly the failed record', async () => {
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace: `pbf-${Math.random()}`, logger: recordingLogger() }))
      .handler(perRecord(chargeSqs))
    const ok = sqsRecord({ id: 1 })
    const bad = sqsRecord({ id: 2, fail: true })
    expect(asLambdaReadsIt(await run(handler, sqsEvent([ok, bad])))).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
  })

  test('Kinesis without idempotency: Lambda reads the failed record\'s sequence number', async () => {
    const handler = middy<KinesisStreamEvent>().handler(perRecord(async (record: { kinesis: { data: string } }) => {
      if (JSON.parse(Buffer.from(record.kinesis.data, 'base64').toString()).fail === true) throw new Error('no')
    }))
    const ok = kinesisRecord({ id: 1 }, 'a')
    const bad = kinesisRecord({ id: 2, fail: true }, 'b')
    expect(asLambdaReadsIt(await run(handler, kinesisEvent([ok, bad])))).toEqual({ batchItemFailures: [{ itemIdentifier: bad.kinesis.sequenceNumber }] })
  })

  test('a batch where every record succeeded reads as an empty batchItemFailures', async () => {
    const handler = middy<SQSEvent>().handler(perRecord(chargeSqs))
    expect(asLambdaReadsIt(await run(handler, sqsEvent([sqsRecord({ id: 3 })])))).toEqual({ batchItemFailures: [] })
  })
})

describe.each(batchMiddyVersions)('tumbling windows on streams, %s', (_name, middy) => {
  test('a handler\'s { state, batchItemFailures } keeps its state through the middleware (Kinesis)', async () => {
    const handler = middy<KinesisStreamEvent>()
      .use(idempotency({ store: table.store, namespace: `window-${Math.random()}`, logger: recordingLogger() }))
      .handler((async (event: KinesisStreamEvent & { state?: Record<string, number> }) => {
        const total = (event.state?.total ?? 0) + event.Records.length
        return { state: { total }, batchItemFailures: [] }
      }) as never)
    const event = { ...kinesisEvent([kinesisRecord({ id: 1 }, 'a'), kinesisRecord({ id: 2 }, 'b')]), window: { start: '2026-11-24T00:00:00Z', end: '2026-11-24T00:05:00Z' }, state: { total: 5 }, shardId: 'shardId-000', eventSourceARN: 'arn:aws:kinesis:us-east-2:123456789012:stream/orders', isFinalInvokeForWindow: false, isWindowTerminatedEarly: false }
    const response = await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(event, lambdaContext())
    expect(asLambdaReadsIt(response)).toEqual({ state: { total: 7 }, batchItemFailures: [] })
  })
})

test('tumbling windows: a batch of replays only still reaches the handler (with no records), which carries the window\'s state', async () => {
  const store = table.store
  const namespace = `window-replay-${Math.random()}`
  const { default: middy } = await import('@middy/core')
  const handler = middy<KinesisStreamEvent>()
    .use(idempotency({ store, namespace, logger: recordingLogger() }))
    .handler((async (event: KinesisStreamEvent & { state?: { total: number } }) => ({ state: { total: (event.state?.total ?? 0) + event.Records.length }, batchItemFailures: [] })) as never)
  const records = [kinesisRecord({ id: 1 }, 'a')]
  const window = { window: { start: '2026-11-24T00:00:00Z', end: '2026-11-24T00:05:00Z' }, shardId: 'shardId-000', isFinalInvokeForWindow: false }
  const invoke = handler as unknown as (e: unknown, c: unknown) => Promise<unknown>
  await invoke({ ...kinesisEvent(records), ...window, state: { total: 0 } }, lambdaContext())
  expect(asLambdaReadsIt(await invoke({ ...kinesisEvent(records), ...window, state: { total: 1 } }, lambdaContext()))).toEqual({ state: { total: 1 }, batchItemFailures: [] })
})

test('tumbling windows: the final invocation of a window, with no records, reaches the handler', async () => {
  const { default: middy } = await import('@middy/core')
  let finals = 0
  const handler = middy<KinesisStreamEvent>()
    .use(idempotency({ store: table.store, namespace: `window-final-${Math.random()}`, logger: recordingLogger() }))
    .handler((async (event: KinesisStreamEvent & { state?: { total: number }, isFinalInvokeForWindow?: boolean }) => {
      if (event.isFinalInvokeForWindow === true) finals++
      return { state: event.state, batchItemFailures: [] }
    }) as never)
  const event = { ...kinesisEvent([]), window: { start: '2026-11-24T00:00:00Z', end: '2026-11-24T00:05:00Z' }, shardId: 'shardId-000', isFinalInvokeForWindow: true, state: { total: 9 } }
  expect(asLambdaReadsIt(await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(event, lambdaContext()))).toEqual({ state: { total: 9 }, batchItemFailures: [] })
  expect(finals).toBe(1)
})
