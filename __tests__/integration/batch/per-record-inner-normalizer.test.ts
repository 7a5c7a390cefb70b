import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import eventNormalizer from '@middy/event-normalizer'
import type { KinesisStreamRecord, MSKRecord, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord, type OutcomeReport } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { middy7, sqsPartialBatchFailure } from '../../support/middy.js'
import { lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

interface Order { id: string, declined?: boolean }

/**
 * `@middy/event-normalizer` inside `idempotency` parses each record in place (its source: it
 * assigns the parsed body, data or value to the record it was handed), so each record perRecord is
 * given is the one it was handed: it runs under its own claim.
 */
interface Case {
  batch: (orders: Order[]) => { event: unknown, reported: unknown[] }
  /** The order in a record the normalizer has parsed. */
  order: (record: any) => Order
  partial?: boolean
}

const cases: Array<[string, Case]> = [
  ['SQS, with @middy/sqs-partial-batch-failure', {
    batch: (orders) => {
      const records = orders.map((o) => sqsRecord(o))
      return { event: sqsEvent(records), reported: records.map((r) => r.messageId) }
    },
    order: (record: SQSRecord) => record.body as unknown as Order,
    partial: true
  }],
  ['Kinesis', {
    batch: (orders) => {
      const records = orders.map((o) => kinesisRecord(o, `pk-${o.id}`))
      return { event: kinesisEvent(records), reported: records.map((r) => r.kinesis.sequenceNumber) }
    },
    order: (record: KinesisStreamRecord) => record.kinesis.data as unknown as Order
  }],
  ['Kafka', {
    batch: (orders) => {
      const records = orders.map((o, i) => kafkaRecord('payments', i, 7, o))
      return { event: mskEvent(records), reported: records.map((r) => ({ partition: `payments-${r.partition}`, offset: 7 })) }
    },
    order: (record: MSKRecord) => record.value as unknown as Order
  }]
]

describe('perRecord behind @middy/event-normalizer inside idempotency, @middy/core 7', () => {
  test.each(cases)('%s: each record runs once under its own key; a redelivery replays', async (_what, { batch, order, partial }) => {
    const namespace = `inner-normalizer-${Math.random().toString(36).slice(2, 10)}`
    const runs: Array<{ id: string, key: string }> = []
    const outcomes: OutcomeReport[] = []
    const stack = middy7()
    if (partial === true) stack.use(sqsPartialBatchFailure({ logger: false as never }))
    const handler = stack
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) } }))
      .use(eventNormalizer())
      .handler(perRecord(async (record: unknown, { key }) => {
        const { id, declined } = order(record)
        runs.push({ id, key })
        if (declined === true) throw new Error(`card declined for ${id}`)
        return { charged: id }
      }))
    const call = handler as unknown as (e: unknown, c: unknown) => Promise<unknown>
    const invoke = async (event: unknown): Promise<unknown> => JSON.parse(JSON.stringify(await call(structuredClone(event), lambdaContext())))
    const { event, reported } = batch([{ id: 'a' }, { id: 'b', declined: true }])
    expect(await invoke(event)).toEqual({ batchItemFailures: [{ itemIdentifier: reported[1] }] })
    const keys = outcomes.map((o) => o.key)
    expect(runs).toEqual([{ id: 'a', key: keys[0] }, { id: 'b', key: keys[1] }])
    runs.length = 0
    expect(await invoke(event)).toEqual({ batchItemFailures: [{ itemIdentifier: reported[1] }] })
    expect(runs).toEqual([{ id: 'b', key: keys[1] }])
  })
})
