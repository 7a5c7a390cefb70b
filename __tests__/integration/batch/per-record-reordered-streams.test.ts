import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { KinesisStreamRecord, MSKRecord } from 'aws-lambda'
import { idempotency, perRecord, type OutcomeReport } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { middy7 } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

interface Order { id: string, amount: number, declined?: boolean }
const decoded = (base64: string): Order => JSON.parse(Buffer.from(base64, 'base64').toString()) as Order
const kinesisOrder = (r: KinesisStreamRecord): Order => decoded(r.kinesis.data)
const kafkaOrder = (r: MSKRecord): Order => decoded(r.value)
const byAmount = <T>(order: (record: T) => Order) => (x: T, y: T): number => order(x).amount - order(y).amount

/**
 * A stream batch of three orders, each in an ordering group of its own (so that no failure holds
 * another back), and what a middleware between `idempotency` and `perRecord` does to its records.
 */
interface Case {
  batch: (orders: Order[]) => { event: unknown, reported: unknown[] }
  change: (event: any) => void
  order: (record: any) => Order
}

const kinesisBatch = (orders: Order[]): ReturnType<Case['batch']> => {
  const records = orders.map((o) => kinesisRecord(o, `pk-${o.id}`))
  return { event: kinesisEvent(records), reported: records.map((r) => r.kinesis.sequenceNumber) }
}
const kafkaBatch = (orders: Order[]): ReturnType<Case['batch']> => {
  const records = orders.map((o, i) => kafkaRecord('payments', i, 40 + i, o))
  return { event: mskEvent(records), reported: records.map((r) => ({ partition: `payments-${r.partition}`, offset: r.offset })) }
}
const sortedKafka = (event: { records: Record<string, MSKRecord[]> }, copy: (r: MSKRecord) => MSKRecord): void => {
  const sorted = Object.values(event.records).flat().map(copy).sort(byAmount(kafkaOrder))
  event.records = Object.fromEntries(sorted.map((r) => [`${r.topic}-${r.partition}`, [r]]))
}

const cases: Array<[string, Case]> = [
  ['Kinesis, event.Records sorted in place',
    { batch: kinesisBatch, change: (event) => event.Records.sort(byAmount(kinesisOrder)), order: kinesisOrder }],
  ['Kinesis, a sorted copy assigned to event.Records',
    { batch: kinesisBatch, change: (event) => { event.Records = [...event.Records].sort(byAmount(kinesisOrder)) }, order: kinesisOrder }],
  ['Kinesis, sorted copies with the same sequence numbers', {
    batch: kinesisBatch,
    change: (event) => { event.Records = event.Records.map((r: KinesisStreamRecord) => structuredClone(r)).sort(byAmount(kinesisOrder)) },
    order: kinesisOrder
  }],
  ['Kafka, its partitions put in another order',
    { batch: kafkaBatch, change: (event) => sortedKafka(event, (r) => r), order: kafkaOrder }],
  ['Kafka, sorted copies with the same topic, partition and offset',
    { batch: kafkaBatch, change: (event) => sortedKafka(event, (r) => ({ ...r })), order: kafkaOrder }]
]

describe('perRecord on a stream behind a middleware that re-orders the records, @middy/core 7', () => {
  test.each(cases)('%s: each record runs once under its own key, is answered for itself, and replays its own result',
    async (_what, { batch, change, order }) => {
      const namespace = `per-record-reordered-stream-${Math.random().toString(36).slice(2, 10)}`
      const runs: Array<{ id: string, key: string }> = []
      const outcomes: OutcomeReport[] = []
      const handler = middy7()
        .use(idempotency({ store: table.store, namespace, logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) } }))
        .use({ before: (request) => { change(request.event) } })
        .handler(perRecord(async (record: unknown, { key }) => {
          const { id, declined } = order(record)
          runs.push({ id, key })
          if (declined === true) throw new Error(`card declined for ${id}`)
          return { charged: id }
        }))
      const call = handler as unknown as (e: unknown, c: unknown) => Promise<Record<number, unknown>>
      const { event, reported } = batch([{ id: 'a', amount: 20 }, { id: 'b', amount: 5, declined: true }, { id: 'c', amount: 10 }])
      const first = await call(structuredClone(event), lambdaContext())
      // As Lambda reads it: the JSON the runtime sends.
      expect(JSON.parse(JSON.stringify(first))).toEqual({ batchItemFailures: [{ itemIdentifier: reported[1] }] })
      // Reported in delivery order: the key each record was claimed under.
      const keys = outcomes.map((o) => o.key)
      expect(new Set(keys).size).toBe(3)
      const ownKey = (i: number): string | undefined => keys[i]
      expect(runs.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
        { id: 'a', key: ownKey(0) }, { id: 'b', key: ownKey(1) }, { id: 'c', key: ownKey(2) }
      ])
      const stored = new Map((await table.items())
        .filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
        .map((i) => [i.idempotencyKey as string, [i.status, i.responseData]]))
      expect(stored).toEqual(new Map([
        [ownKey(0), ['COMPLETED', JSON.stringify({ charged: 'a' })]],
        [ownKey(2), ['COMPLETED', JSON.stringify({ charged: 'c' })]]
      ]))
      // The whole batch again (a stream may deliver a record it checkpointed past): a and c replay their own results.
      runs.length = 0
      const again = await call(structuredClone(event), lambdaContext())
      expect(JSON.parse(JSON.stringify(again))).toEqual({ batchItemFailures: [{ itemIdentifier: reported[1] }] })
      expect(runs).toEqual([{ id: 'b', key: ownKey(1) }])
      expect(again[0]).toEqual({ status: 'fulfilled', value: { charged: 'a' } })
      expect(again[2]).toEqual({ status: 'fulfilled', value: { charged: 'c' } })
    })
})
