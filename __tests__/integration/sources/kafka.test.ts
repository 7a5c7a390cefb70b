import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import eventNormalizer from '@middy/event-normalizer'
import type { MSKEvent, MSKRecord } from 'aws-lambda'
import { idempotency, IdempotencyKeyError, perRecord, type IdempotencyStore, type OutcomeReport } from '../../../src/index.js'
import { kafkaRecord, mskEvent, selfManagedKafkaEvent } from '../../support/kafka.js'
import { batchMiddyVersions } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'
import { integrationStores, type StoreUnderTest } from '../../support/stores.js'

// The same promises on every store: DynamoDB Local, and a real redis-server through each client family.
const cases = integrationStores.flatMap(([storeName, open]) => batchMiddyVersions.map(([middyName, middy]) => [storeName, middyName, open, middy] as const))

const valueOf = (record: MSKRecord): { orderId: string, fail?: boolean } => JSON.parse(Buffer.from(record.value, 'base64').toString()) as { orderId: string, fail?: boolean }

describe.each(cases)('Kafka per record (Amazon MSK and self-managed) on %s, %s', (_storeName, _middyName, open, middy) => {
  let backend: StoreUnderTest
  let store: IdempotencyStore
  beforeAll(async () => { backend = await open(); store = backend.store })
  afterAll(async () => { await backend.close() })

  const consumer = (options: { key?: string, normalized?: boolean } = {}, outcomes: OutcomeReport[] = []) => {
    const runs: string[] = []
    let stack = middy<MSKEvent>()
    if (options.normalized === true) stack = stack.use(eventNormalizer())
    const handler = stack
      .use(idempotency({ store, namespace: `kafka-${Math.random()}`, logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o) }, ...(options.key === undefined ? {} : { key: options.key }) }))
      .handler(perRecord(async (record: MSKRecord) => {
        const value = typeof record.value === 'string' ? valueOf(record) : record.value as unknown as { orderId: string, fail?: boolean }
        runs.push(`${record.topic}-${record.partition}@${record.offset}`)
        if (value.fail === true) throw new Error(`declined ${value.orderId}`)
      }))
    return { runs, invoke: async (event: unknown) => await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(structuredClone(event), lambdaContext()) }
  }

  test('a failure holds back the rest of its partition (reported by offset, objects, never strings); other partitions go on', async () => {
    const { runs, invoke } = consumer()
    const event = mskEvent([
      kafkaRecord('orders', 0, 10, { orderId: 'a' }), kafkaRecord('orders', 0, 11, { orderId: 'b', fail: true }), kafkaRecord('orders', 0, 12, { orderId: 'c' }),
      kafkaRecord('orders', 1, 7, { orderId: 'd' }), kafkaRecord('orders', 1, 8, { orderId: 'e' })
    ])
    const response = JSON.parse(JSON.stringify(await invoke(event))) as { batchItemFailures: Array<{ itemIdentifier: unknown }> }
    // In order within a partition; partitions run side by side.
    expect(runs.filter((r) => r.startsWith('orders-0'))).toEqual(['orders-0@10', 'orders-0@11'])
    expect(runs.filter((r) => r.startsWith('orders-1'))).toEqual(['orders-1@7', 'orders-1@8'])
    // The lowest reported offset of partition 0 is its first unfinished record.
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: { partition: 'orders-0', offset: 11 } }, { itemIdentifier: { partition: 'orders-0', offset: 12 } }])
    // Lambda resumes partition 0 from offset 11: the completed records of the batch replay, and
    // the failure runs again (released, not kept FAILED: Kafka counts no deliveries).
    runs.length = 0
    await invoke(event)
    expect(runs).toEqual(['orders-0@11'])
  })

  test('the default key is the record\'s place in the log: the same offset of another cluster is another record', async () => {
    const { runs, invoke } = consumer()
    const record = kafkaRecord('orders', 0, 42, { orderId: 'x' })
    await invoke(mskEvent([record], 'arn:aws:kafka:us-east-1:123456789012:cluster/one/1'))
    await invoke(mskEvent([record], 'arn:aws:kafka:us-east-1:123456789012:cluster/two/2'))
    await invoke(selfManagedKafkaEvent([record]))
    await invoke(selfManagedKafkaEvent([record]))
    expect(runs).toEqual(['orders-0@42', 'orders-0@42', 'orders-0@42'])
  })

  test('a key path into value reads the decoded JSON, with or without event-normalizer; a value that is not JSON fails that record alone', async () => {
    const outcomes: OutcomeReport[] = []
    const { runs, invoke } = consumer({ key: 'value.orderId' }, outcomes)
    await invoke(mskEvent([kafkaRecord('orders', 0, 1, { orderId: 'same' })]))
    await invoke(mskEvent([kafkaRecord('orders', 3, 99, { orderId: 'same' })]))
    expect(runs).toEqual(['orders-0@1'])
    const bad = kafkaRecord('orders', 4, 1, { orderId: 'z' })
    bad.value = Buffer.from('not json').toString('base64')
    const response = JSON.parse(JSON.stringify(await invoke(mskEvent([bad, kafkaRecord('orders', 5, 1, { orderId: 'ok' })])))) as { batchItemFailures: unknown[] }
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: { partition: 'orders-4', offset: 1 } }])
    expect(outcomes.find((o) => o.error !== undefined)?.error).toBeInstanceOf(IdempotencyKeyError)
    const normalized = consumer({ key: 'value.orderId', normalized: true })
    await normalized.invoke(mskEvent([kafkaRecord('orders', 0, 1, { orderId: 'n' }), kafkaRecord('orders', 0, 2, { orderId: 'n' })]))
    expect(normalized.runs).toEqual(['orders-0@1'])
  })

  test('mode \'kafka\' forces the source; a hand-written handler sees the records in Object.values(records).flat() order', async () => {
    const seen: string[] = []
    const handler = middy<MSKEvent>()
      .use(idempotency({ store, namespace: `kafka-hand-${Math.random()}`, mode: 'kafka', logger: recordingLogger() }))
      .handler(async (event: MSKEvent) => await Promise.allSettled(Object.values(event.records).flat().map(async (r) => { seen.push(`${r.partition}@${r.offset}`) })))
    const response = await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(mskEvent([kafkaRecord('t', 1, 5, { orderId: 'a' }), kafkaRecord('t', 0, 3, { orderId: 'b' })]), lambdaContext())
    expect(seen).toEqual(['1@5', '0@3'])
    expect(JSON.parse(JSON.stringify(response))).toEqual({ batchItemFailures: [] })
  })
})
