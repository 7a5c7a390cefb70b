import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { DynamoDBRecord, KinesisStreamRecord, MSKRecord } from 'aws-lambda'
import { idempotency } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { middy7 } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'
import { dynamodbEvent, dynamodbRecord, kinesisEvent, kinesisRecord } from '../../support/streams.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

interface Order { id: string, amount: number, declined?: boolean }
const decoded = (base64: string): Order => JSON.parse(Buffer.from(base64, 'base64').toString()) as Order

/**
 * A stream source's batch of two records, delivered charged first, and a handler that re-orders
 * them (so the declined one comes first) before `Promise.allSettled` over the records as it left them.
 */
interface Reordering {
  batch: (charged: Order, declined: Order) => { event: unknown, declinedId: unknown }
  /** Re-orders the event's records, then lists them as the handler then sees them. */
  reorder: (event: any) => unknown[]
  order: (record: any) => Order
}

const kinesisOrder = (r: KinesisStreamRecord): Order => decoded(r.kinesis.data)
const dynamodbOrder = (r: DynamoDBRecord): Order => ({
  id: String(r.dynamodb?.Keys?.id?.S),
  amount: Number(r.dynamodb?.NewImage?.amount?.N),
  declined: r.dynamodb?.NewImage?.declined !== undefined
})
const byAmount = <T>(order: (record: T) => Order) => (x: T, y: T): number => order(x).amount - order(y).amount
const kafkaOrder = (r: MSKRecord): Order => decoded(r.value)

const cases: Array<[string, Reordering]> = [
  ['Kinesis, event.Records sorted in place', {
    batch: (a, b) => {
      const records = [kinesisRecord(a, 'A'), kinesisRecord(b, 'B')]
      return { event: kinesisEvent(records), declinedId: records[1]?.kinesis.sequenceNumber }
    },
    reorder: (event) => event.Records.sort(byAmount(kinesisOrder)),
    order: kinesisOrder
  }],
  ['DynamoDB Streams, a sorted copy assigned to event.Records', {
    batch: (a, b) => {
      const records = [
        dynamodbRecord(a.id, { amount: a.amount }),
        dynamodbRecord(b.id, { amount: b.amount, declined: 'yes' })
      ]
      return { event: dynamodbEvent(records), declinedId: records[1]?.dynamodb?.SequenceNumber }
    },
    reorder: (event) => (event.Records = [...event.Records].sort(byAmount(dynamodbOrder))),
    order: dynamodbOrder
  }],
  ['Kafka, its partitions put in another order', {
    batch: (a, b) => ({
      event: mskEvent([kafkaRecord('payments', 0, 11, a), kafkaRecord('payments', 1, 7, b)]),
      declinedId: { partition: 'payments-1', offset: 7 }
    }),
    reorder: (event) => {
      event.records = Object.fromEntries(Object.entries(event.records).reverse())
      return Object.values(event.records).flat()
    },
    order: kafkaOrder
  }],
  ['Kafka, one partition\'s records sorted in place', {
    batch: (a, b) => ({
      event: mskEvent([kafkaRecord('payments', 0, 11, a), kafkaRecord('payments', 0, 12, b)]),
      declinedId: { partition: 'payments-0', offset: 12 }
    }),
    reorder: (event) => {
      for (const records of Object.values(event.records) as MSKRecord[][]) records.sort(byAmount(kafkaOrder))
      return Object.values(event.records).flat()
    },
    order: kafkaOrder
  }]
]

describe('a hand-written stream handler that re-orders its records, @middy/core 7', () => {
  test.each(cases)('%s: each result goes to its own record; the declined one is reported, ' +
    'the charged one COMPLETED and not charged again', async (_what, source) => {
    const namespace = `reordered-stream-${Math.random().toString(36).slice(2, 10)}`
    const charges: string[] = []
    const handler = middy7()
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger() }))
      .handler(async (event: unknown) => await Promise.allSettled(source.reorder(event).map(async (record) => {
        const order = source.order(record)
        if (order.declined === true) throw new Error(`card declined for ${order.id}`)
        charges.push(order.id)
        return { charged: order.id }
      })))
    const call = handler as unknown as (e: unknown, c: unknown) => Promise<unknown>
    // As Lambda reads the answer: the JSON the runtime sends.
    const invoke = async (event: unknown): Promise<unknown> =>
      JSON.parse(JSON.stringify(await call(event, lambdaContext())))
    const { event, declinedId } = source.batch({ id: 'a', amount: 20 }, { id: 'b', amount: 5, declined: true })
    expect(await invoke(structuredClone(event))).toEqual({ batchItemFailures: [{ itemIdentifier: declinedId }] })
    expect(charges).toEqual(['a'])
    const stored = (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
    expect(stored.map((i) => [i.status, i.responseData])).toEqual([['COMPLETED', JSON.stringify({ charged: 'a' })]])
    // The whole batch again (a stream may deliver a record it checkpointed past): the charged one replays.
    expect(await invoke(structuredClone(event))).toEqual({ batchItemFailures: [{ itemIdentifier: declinedId }] })
    expect(charges).toEqual(['a'])
  })
})
