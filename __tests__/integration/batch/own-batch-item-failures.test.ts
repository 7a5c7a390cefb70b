import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { idempotency, IdempotencyConfigError } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { middy7, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { dynamodbEvent, dynamodbRecord, kinesisEvent, kinesisRecord } from '../../support/streams.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const statuses = async (namespace: string): Promise<unknown[]> =>
  (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => i.status).sort()

/** A batch of two records, and what the handler reports of it by mistake (Lambda reads each as a complete failure). */
interface BadAnswer {
  event: () => unknown
  answer: (event: any) => unknown
  /** What the error must say Lambda expects. */
  expects: RegExp
}

const sqsBatch = (): unknown => sqsEvent([sqsRecord({ id: 'a' }), sqsRecord({ id: 'b' })])
const kinesisBatch = (): unknown => kinesisEvent([kinesisRecord({ id: 'a' }, 'A'), kinesisRecord({ id: 'b' }, 'B')])
const dynamodbBatch = (): unknown =>
  dynamodbEvent([dynamodbRecord('a', { amount: 1 }), dynamodbRecord('b', { amount: 2 })])
const kafkaBatch = (): unknown =>
  mskEvent([kafkaRecord('payments', 0, 11, { id: 'a' }), kafkaRecord('payments', 1, 7, { id: 'b' })])

/** The error names the entry Lambda expects, word for word. */
const expecting = (identifier: string): RegExp =>
  new RegExp(`it expects \\{ itemIdentifier: ${identifier.replace(/[{}]/g, '\\$&')} \\}`)
const SQS = expecting('<its messageId>')
const KAFKA = expecting("{ partition: '<topic>-<partition>', offset: <its offset, a number> }")
const failing = (...entries: unknown[]) => () => ({ batchItemFailures: entries })

const badAnswers: Array<[string, BadAnswer]> = [
  ['Kinesis, reporting eventID instead of the sequence number', {
    event: kinesisBatch,
    answer: (e) => failing({ itemIdentifier: e.Records[1].eventID })(),
    expects: expecting('<its kinesis.sequenceNumber>')
  }],
  ['DynamoDB Streams, reporting eventID instead of the sequence number', {
    event: dynamodbBatch,
    answer: (e) => failing({ itemIdentifier: e.Records[1].eventID })(),
    expects: expecting('<its dynamodb.SequenceNumber>')
  }],
  ['SQS, an entry with a bad key name ({ messageId })', {
    event: sqsBatch, answer: (e) => failing({ messageId: e.Records[1].messageId })(), expects: SQS
  }],
  ['SQS, an empty itemIdentifier', { event: sqsBatch, answer: failing({ itemIdentifier: '' }), expects: SQS }],
  ['SQS, a null itemIdentifier', { event: sqsBatch, answer: failing({ itemIdentifier: null }), expects: SQS }],
  ['SQS, a null entry', { event: sqsBatch, answer: failing(null), expects: SQS }],
  ['SQS, a messageId of another batch', {
    event: sqsBatch, answer: failing({ itemIdentifier: 'msg-elsewhere' }), expects: SQS
  }],
  ['SQS, batchItemFailures that is not a list', {
    event: sqsBatch,
    answer: (e) => ({ batchItemFailures: { itemIdentifier: e.Records[1].messageId } }),
    expects: /batchItemFailures is not a list/
  }],
  ['Kafka, the identifier as text instead of { partition, offset }', {
    event: kafkaBatch, answer: failing({ itemIdentifier: 'payments-1@7' }), expects: KAFKA
  }],
  ['Kafka, an offset that is not in the batch', {
    event: kafkaBatch, answer: failing({ itemIdentifier: { partition: 'payments-1', offset: 8 } }), expects: KAFKA
  }]
]

type Invoke = (e: unknown, c: unknown) => Promise<unknown>

describe('a handler\'s own { batchItemFailures } that Lambda reads as a whole-batch failure, @middy/core 7', () => {
  test.each(badAnswers)('%s: no record is completed on its strength; ' +
    'the batch fails with an error saying what Lambda expects', async (_what, bad) => {
    const namespace = `bad-answer-${Math.random().toString(36).slice(2, 10)}`
    const outcomes: unknown[] = []
    const handler = middy7()
      .use(idempotency({
        store: table.store, namespace, logger: recordingLogger(),
        onOutcome: (o) => { outcomes.push(o.kind) }
      }))
      .handler(async (event: unknown) => bad.answer(event))
    const invocation = (handler as unknown as Invoke)(bad.event(), lambdaContext())
    // Thrown: Lambda retries the whole batch, as it would have read the answer.
    await expect(invocation).rejects.toThrow(IdempotencyConfigError)
    await expect(invocation).rejects.toThrow(bad.expects)
    // Both records ran; neither is acknowledged as done, nor released to run again.
    expect(await statuses(namespace)).toEqual(['FAILED', 'FAILED'])
    expect(outcomes).toEqual(['failed', 'failed'])
  })

  test('SQS with sqsPartialBatchFailure outside: the answer reports every record failed, none COMPLETED', async () => {
    const namespace = `bad-answer-pbf-${Math.random().toString(36).slice(2, 10)}`
    const handler = middy7()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger() }))
      .handler(async (event: any) => ({ batchItemFailures: [{ messageId: event.Records[0].messageId }] }))
    const event = sqsBatch() as { Records: Array<{ messageId: string }> }
    const response = await (handler as unknown as Invoke)(event, lambdaContext())
    expect(failedIds(response).sort()).toEqual(event.Records.map((r) => r.messageId).sort())
    expect(await statuses(namespace)).toEqual(['FAILED', 'FAILED'])
  })

  test('what Lambda reads as readable still is: null batchItemFailures is all done, ' +
    'and a record named correctly fails alone', async () => {
    const namespace = `good-answer-${Math.random().toString(36).slice(2, 10)}`
    const handler = middy7()
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger() }))
      .handler(async (event: any) => event.Records.length === 1
        ? { batchItemFailures: null }
        : { batchItemFailures: [{ itemIdentifier: event.Records[1].kinesis.sequenceNumber }] })
    const invoke = async (event: unknown): Promise<unknown> =>
      await (handler as unknown as Invoke)(event, lambdaContext())
    const [a, b, c] = ['a', 'b', 'c'].map((id) => kinesisRecord({ id }, id.toUpperCase()))
    expect(failedIds(await invoke(kinesisEvent([a, b] as never)))).toEqual([b?.kinesis.sequenceNumber])
    expect(failedIds(await invoke(kinesisEvent([c] as never)))).toEqual([])
    expect(await statuses(namespace)).toEqual(['COMPLETED', 'COMPLETED'])
  })
})
