import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import httpErrorHandler from '@middy/http-error-handler'
import { IdempotencyConfigError, MemoryStore } from '../../../src/index.js'
import * as everyEvent from '../../../src/index.js'
import * as eventOnly from '../../../src/event.js'
import { kafkaRecord } from '../../support/kafka.js'
import { lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { dynamodbRecord, kinesisRecord } from '../../support/streams.js'

// Batches Lambda delivers that no middleware of this package takes per record, shaped as AWS
// documents them. Taken as one unit, one failed record makes Lambda (or the pipe) deliver the whole
// batch again, and the neighbours that had finished run again: the reason a batch is refused.
const mq = { eventSource: 'aws:mq', eventSourceArn: 'arn:aws:mq:us-east-1:123456789012:broker:payments:b-1', messages: [
  { messageID: 'ID:b-1-1', messageType: 'jms/text-message', data: 'eyJuIjoxfQ==', timestamp: 1, deliveryMode: 1, redelivered: false, destination: { physicalName: 'payments' } },
  { messageID: 'ID:b-1-2', messageType: 'jms/text-message', data: 'eyJuIjoyfQ==', timestamp: 1, deliveryMode: 1, redelivered: false, destination: { physicalName: 'payments' } }
] }
const rabbit = { eventSource: 'aws:rmq', eventSourceArn: 'arn:aws:mq:us-east-1:123456789012:broker:payments:b-2', rmqMessagesByQueue: {
  'payments::/': [{ basicProperties: { deliveryMode: 1 }, redelivered: false, data: 'eyJuIjoxfQ==' }, { basicProperties: { deliveryMode: 1 }, redelivered: false, data: 'eyJuIjoyfQ==' }]
} }
const docdb = { eventSourceArn: 'arn:aws:rds:us-east-1:123456789012:cluster:payments', eventSource: 'aws:docdb', events: [
  { event: { _id: { _data: '1' }, operationType: 'insert', ns: { db: 'shop', coll: 'payments' }, fullDocument: { n: 1 } } },
  { event: { _id: { _data: '2' }, operationType: 'insert', ns: { db: 'shop', coll: 'payments' }, fullDocument: { n: 2 } } }
] }
// EventBridge Pipes sends a Lambda target a JSON array, even of one record, and takes
// batchItemFailures back for SQS and stream sources:
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-batching-concurrency.html
const pipesKafka = { ...kafkaRecord('payments', 0, 7, { n: 1 }), eventSource: 'aws:kafka', eventSourceArn: 'arn:aws:kafka:us-east-1:123456789012:cluster/payments/abc-1' }
const batches: Array<[string, string, unknown]> = [
  ['an Amazon MQ (ActiveMQ) batch', 'an Amazon MQ batch', mq],
  ['an Amazon MQ (RabbitMQ) batch', 'an Amazon MQ batch', rabbit],
  ['a DocumentDB change stream batch', 'a DocumentDB change stream batch', docdb],
  ['a Pipes batch of SQS messages', 'an EventBridge Pipes batch of sqs records', [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]],
  ['a Pipes batch of one SQS message', 'an EventBridge Pipes batch of sqs records', [sqsRecord({ n: 1 })]],
  ['a Pipes batch of Kinesis records', 'an EventBridge Pipes batch of kinesis records', [kinesisRecord({ n: 1 }), kinesisRecord({ n: 2 })]],
  ['a Pipes batch of DynamoDB Streams records', 'an EventBridge Pipes batch of dynamodb records', [dynamodbRecord('1', { id: '1' }), dynamodbRecord('2', { id: '2' })]],
  ['a Pipes batch of Kafka records', 'an EventBridge Pipes batch of kafka records', [pipesKafka]]
]

describe("idempotency from 'middy-idempotency/event' on batches no entry takes per record", () => {
  test.each(batches)('refuses %s rather than take it as one unit: nothing is claimed, the handler is not called', async (_name, named, event) => {
    const store = new MemoryStore()
    const logger = recordingLogger()
    let called = false
    const handler = middy().use(eventOnly.idempotency({ store, logger })).handler(async () => { called = true })
    const refused = handler(structuredClone(event), lambdaContext())
    await expect(refused).rejects.toThrow(IdempotencyConfigError)
    await expect(refused).rejects.toThrow(`takes whole events, and this is ${named}`)
    await expect(refused).rejects.toThrow("run each record through makeIdempotent() from 'middy-idempotency', or set mode: 'event' to take the batch as one unit")
    expect(called).toBe(false)
    expect(store.records()).toEqual([])
    expect(logger.lines.map((l) => l.level)).toEqual(['error'])
  })

  test.each(batches)("takes %s as one unit when mode: 'event' says so", async (_name, _named, event) => {
    const store = new MemoryStore()
    let runs = 0
    const handler = middy().use(eventOnly.idempotency({ store, logger: false, mode: 'event' })).handler(async () => ++runs)
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
  })

  test.each([
    ['an array of plain values (a direct invocation)', [{ orderId: 'o-1' }, { orderId: 'o-2' }]],
    ['an SNS notification', { Records: [{ EventSource: 'aws:sns', EventVersion: '1.0', Sns: { MessageId: 'm-1', Message: '{}' } }] }],
    ['an S3 Batch Operations task', { invocationSchemaVersion: '2.0', invocationId: 'i-1', job: { id: 'j-1', userArguments: {} }, tasks: [{ taskId: 't-1', s3Key: 'k', s3VersionId: null, s3Bucket: 'b' }] }],
    ['a CloudWatch Logs subscription', { awslogs: { data: 'H4sIAAAAAAAAAA==' } }],
    ['a Kinesis Data Firehose transformation', { invocationId: 'i-1', deliveryStreamArn: 'arn:aws:firehose:us-east-1:123456789012:deliverystream/s', region: 'us-east-1', records: [{ recordId: 'r-1', approximateArrivalTimestamp: 1, data: 'e30=' }] }]
  ])('still takes %s whole', async (_name, event) => {
    const store = new MemoryStore()
    let runs = 0
    const handler = middy().use(eventOnly.idempotency({ store, logger: false })).handler(async () => ++runs)
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
  })
})

describe("a refusal under the README's HTTP stack", () => {
  // http-error-handler answers any error with a 500 response, which Lambda takes as success: an SQS
  // batch wired to an HTTP handler by mistake would be acknowledged, every record dropped unrun.
  test.each([
    ['an SQS batch', sqsEvent([sqsRecord({ n: 1 }), sqsRecord({ n: 2 })])],
    ['a Pipes batch', [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]]
  ])('%s refused is thrown to Lambda, not answered as a response', async (_name, event) => {
    let called = false
    const handler = middy()
      .use(eventOnly.idempotency({ store: new MemoryStore(), logger: false }))
      .use(httpErrorHandler({ logger: false }))
      .handler(async () => { called = true; return { statusCode: 201 } })
    await expect(handler(event, lambdaContext())).rejects.toThrow(IdempotencyConfigError)
    expect(called).toBe(false)
  })
})

describe("idempotency from 'middy-idempotency' on the same batches", () => {
  test.each(batches)('refuses %s rather than take it as one unit: nothing is claimed, the handler is not called', async (_name, named, event) => {
    const store = new MemoryStore()
    let called = false
    const handler = middy().use(everyEvent.idempotency({ store, logger: false })).handler(async () => { called = true })
    const refused = handler(structuredClone(event), lambdaContext())
    await expect(refused).rejects.toThrow(IdempotencyConfigError)
    await expect(refused).rejects.toThrow(`this is ${named}, which no idempotency middleware takes per record`)
    expect(called).toBe(false)
    expect(store.records()).toEqual([])
  })

  test.each(batches)("takes %s as one unit when mode: 'event' says so", async (_name, _named, event) => {
    let runs = 0
    const handler = middy().use(everyEvent.idempotency({ store: new MemoryStore(), logger: false, mode: 'event' })).handler(async () => ++runs)
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
  })
})
