import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import eventNormalizer from '@middy/event-normalizer'
import type { DynamoDBRecord, KinesisStreamEvent, KinesisStreamRecord } from 'aws-lambda'
import { idempotency, IdempotencyConfigError, perRecord, type IdempotencyOptions } from '../../../src/index.js'
import { middyVersions } from '../../support/middy.js'
import { failedIds, lambdaContext } from '../../support/sqs.js'
import { dynamodbEvent, dynamodbRecord, kinesisEvent, kinesisRecord, retriedFrom } from '../../support/streams.js'
import { integrationStores, type StoreUnderTest } from '../../support/stores.js'

const uid = (): string => Math.random().toString(36).slice(2, 10)

describe.each(integrationStores)('on %s', (_store, open) => {
  let backend: StoreUnderTest
  beforeAll(async () => { backend = await open() })
  afterAll(async () => { await backend.close() })
  /** The store, and the operations asked of it from now on. */
  const countingStore = () => {
    backend.sent.length = 0
    return { store: backend.store, sent: backend.sent }
  }

  describe.each(middyVersions)('streams, %s', (_name, middy) => {
    const normalizerCases: Array<[string, boolean]> = [['without', false], ['with', true]]
    describe.each(normalizerCases)('Kinesis, %s @middy/event-normalizer', (_w, normalized) => {
      const consumer = (fail: Set<string>, options: Partial<IdempotencyOptions> = {}) => {
        const { store, sent } = countingStore()
        const ran: string[] = []
        const stack = middy()
        if (normalized) stack.use(eventNormalizer())
        const handler = stack
          .use(idempotency({ store, namespace: `kinesis-${uid()}`, logger: false, ...options }))
          .handler(perRecord(async (record: KinesisStreamRecord) => {
            const data = normalized ? record.kinesis.data as unknown as { id: string } : JSON.parse(Buffer.from(record.kinesis.data, 'base64').toString()) as { id: string }
            ran.push(data.id)
            if (fail.has(data.id)) throw new Error(`could not process ${data.id}`)
            return data.id
          }) as never)
        return { handler: handler as unknown as (event: unknown, context: unknown) => Promise<unknown>, ran, sent }
      }

      test('a failure holds back the rest of its partition key; the retry from it replays what completed, by one bulk read', async () => {
        const fail = new Set(['a2'])
        const { handler, ran, sent } = consumer(fail)
        const records = [kinesisRecord({ id: 'a1' }, 'A'), kinesisRecord({ id: 'b1' }, 'B'), kinesisRecord({ id: 'a2' }, 'A'), kinesisRecord({ id: 'b2' }, 'B'), kinesisRecord({ id: 'a3' }, 'A')]
        const first = await handler(kinesisEvent(records.map((r) => structuredClone(r))), lambdaContext())
        // Lambda's own answer, built by the middleware: the failure and the record held back behind it.
        expect(failedIds(first)).toEqual([records[2]?.kinesis.sequenceNumber, records[4]?.kinesis.sequenceNumber])
        // Partition keys run side by side; within one, in order, and not past its failure.
        expect(ran.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2'])
        expect(ran.filter((id) => id.startsWith('b'))).toEqual(['b1', 'b2'])

        // Lambda resumes the shard from the lowest failure: b2 (completed) comes back with a2 and a3.
        fail.clear()
        ran.length = 0
        sent.length = 0
        const second = await handler(kinesisEvent(retriedFrom(records, 2)), lambdaContext())
        expect(second).toEqual({ batchItemFailures: [] })
        expect(ran).toEqual(['a2', 'a3'])
        expect(sent.filter((c) => c === 'read')).toHaveLength(1)
        expect(sent.filter((c) => c === 'claim')).toHaveLength(2)
      })

      test('the answer names records by sequence number even for a hand-written allSettled handler', async () => {
        const { store } = countingStore()
        const handler = middy<KinesisStreamEvent>()
          .use(idempotency({ store, namespace: `kinesis-${uid()}`, logger: false }))
          .handler(async (event: { Records: KinesisStreamRecord[] }) => await Promise.allSettled(event.Records.map(async (r, i) => { if (i === 1) throw new Error('no'); return i })))
        const records = [kinesisRecord({ id: 1 }, 'A'), kinesisRecord({ id: 2 }, 'B')]
        expect(failedIds(await handler(kinesisEvent(records), lambdaContext()))).toEqual([records[1]?.kinesis.sequenceNumber])
      })
    })

    describe.each(normalizerCases)('DynamoDB Streams, %s @middy/event-normalizer', (_w, normalized) => {
      test('per item: a failed MODIFY holds back the later changes of that item only, and they run on the retry', async () => {
        const { store } = countingStore()
        const fail = new Set(['o1:2'])
        const ran: string[] = []
        const stack = middy()
        if (normalized) stack.use(eventNormalizer())
        const handler = stack
          .use(idempotency({ store, namespace: `ddb-${uid()}`, logger: false }))
          .handler(perRecord(async (record: DynamoDBRecord) => {
            const image = record.dynamodb?.NewImage as Record<string, unknown>
            const id = normalized ? image.id as string : (image.id as { S: string }).S
            const version = normalized ? image.version as number : Number((image.version as { N: string }).N)
            ran.push(`${id}:${version}`)
            if (fail.has(`${id}:${version}`)) throw new Error('downstream refused')
          }) as never) as unknown as (event: unknown, context: unknown) => Promise<unknown>
        const records = [
          dynamodbRecord('o1', { version: 1 }), dynamodbRecord('o2', { version: 1 }),
          dynamodbRecord('o1', { version: 2 }, 'MODIFY'), dynamodbRecord('o1', { version: 3 }, 'MODIFY'), dynamodbRecord('o2', { version: 2 }, 'MODIFY')
        ]
        const first = await handler(dynamodbEvent(records.map((r) => structuredClone(r))), lambdaContext())
        expect(failedIds(first)).toEqual([records[2]?.dynamodb?.SequenceNumber, records[3]?.dynamodb?.SequenceNumber])
        expect(ran.filter((r) => r.startsWith('o1'))).toEqual(['o1:1', 'o1:2'])
        expect(ran.filter((r) => r.startsWith('o2'))).toEqual(['o2:1', 'o2:2'])
        fail.clear()
        ran.length = 0
        expect(await handler(dynamodbEvent(retriedFrom(records, 2)), lambdaContext())).toEqual({ batchItemFailures: [] })
        expect(ran).toEqual(['o1:2', 'o1:3'])
      })
    })

    test('a stream record without a sequence number is refused with a clear error', async () => {
      const { store } = countingStore()
      const handler = middy().use(idempotency({ store, logger: false })).handler(async () => [])
      const broken = { ...kinesisRecord({ id: 1 }), kinesis: { data: 'e30=' } }
      await expect(handler({ Records: [broken] }, lambdaContext())).rejects.toThrow(IdempotencyConfigError)
      await expect(handler({ Records: [broken] }, lambdaContext())).rejects.toThrow(/every aws:kinesis record needs a kinesis.sequenceNumber/)
    })
  })
})
