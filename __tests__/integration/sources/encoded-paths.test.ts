import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import eventNormalizer from '@middy/event-normalizer'
import type { KinesisStreamEvent, KinesisStreamRecord } from 'aws-lambda'
import { idempotency, IdempotencyKeyError, perRecord, type OutcomeReport } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

describe.each(batchMiddyVersions)('a key path into Kinesis data reads the decoded JSON, %s', (_name, middy) => {
  const consumer = (normalized: boolean, namespace: string, outcomes: OutcomeReport[] = [], payload?: string) => {
    const runs: string[] = []
    let stack = middy<KinesisStreamEvent>()
    if (normalized) stack = stack.use(eventNormalizer())
    const handler = stack
      .use(idempotency({ store: table.store, namespace, key: 'kinesis.data.paymentId', ...(payload === undefined ? {} : { payload }), logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) } }))
      .handler(perRecord(async (record: KinesisStreamRecord) => { runs.push(record.kinesis.sequenceNumber) }))
    return { runs, invoke: async (records: KinesisStreamRecord[]) => await (handler as unknown as (e: unknown, c: unknown) => Promise<{ batchItemFailures: unknown[] }>)(kinesisEvent(structuredClone(records)), lambdaContext()) }
  }

  test('without a normalizer, the base64 data is decoded; the same payment in another record is replayed, not run', async () => {
    const { runs, invoke } = consumer(false, `encoded-${Math.random()}`)
    expect((await invoke([kinesisRecord({ paymentId: 'p-1' }, 'a')])).batchItemFailures).toEqual([])
    expect((await invoke([kinesisRecord({ paymentId: 'p-1' }, 'a')])).batchItemFailures).toEqual([])
    expect(runs).toHaveLength(1)
  })

  test('with and without @middy/event-normalizer, paths into the data read the same: a record seen by one is replayed by the other', async () => {
    const namespace = `both-${Math.random()}`
    // The default payload is the data as delivered (base64, or decoded in place by the
    // normalizer): a path into it reads the same JSON both ways.
    const raw = consumer(false, namespace, [], 'kinesis.data.amount')
    const decoded = consumer(true, namespace, [], 'kinesis.data.amount')
    await raw.invoke([kinesisRecord({ paymentId: 'p-2', amount: 5 }, 'a')])
    expect((await decoded.invoke([kinesisRecord({ paymentId: 'p-2', amount: 5 }, 'a')])).batchItemFailures).toEqual([])
    expect(raw.runs).toHaveLength(1)
    expect(decoded.runs).toHaveLength(0)
  })

  test('data that is not JSON fails that record alone, with an error that says so', async () => {
    const outcomes: OutcomeReport[] = []
    const { runs, invoke } = consumer(false, `bad-${Math.random()}`, outcomes)
    const bad = kinesisRecord({ paymentId: 'x' }, 'a')
    bad.kinesis.data = Buffer.from('not json').toString('base64')
    const good = kinesisRecord({ paymentId: 'p-3' }, 'b')
    expect((await invoke([bad, good])).batchItemFailures).toEqual([{ itemIdentifier: bad.kinesis.sequenceNumber }])
    expect(runs).toEqual([good.kinesis.sequenceNumber])
    const error = outcomes.find((o) => o.error !== undefined)?.error
    expect(error).toBeInstanceOf(IdempotencyKeyError)
    expect((error as Error).message).toMatch(/key path "kinesis\.data\.paymentId" reads into kinesis\.data, which is not base64-encoded JSON/)
  })
})
