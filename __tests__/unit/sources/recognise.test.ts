import { describe, expect, test } from '@jest/globals'
import { sourceOf } from '../../../src/sources/index.js'
import { batchModeOf } from '../../../src/sources/recognise.js'
import { httpEventShapes } from '../../support/http.js'
import { kafkaRecord, mskEvent, selfManagedKafkaEvent } from '../../support/kafka.js'
import { sqsEvent, sqsRecord } from '../../support/sqs.js'
import { dynamodbEvent, dynamodbRecord, kinesisEvent, kinesisRecord } from '../../support/streams.js'

// What middy-idempotency/event refuses as a batch must be what the batch engine takes as one.
const batches: Array<[string, unknown]> = [
  ['an SQS batch', sqsEvent([sqsRecord({ a: 1 })])],
  ['an empty Records array', { Records: [] }],
  ['a Kinesis batch', kinesisEvent([kinesisRecord({ a: 1 })])],
  ['a DynamoDB Streams batch', dynamodbEvent([dynamodbRecord('1', { id: '1' })])],
  ['an Amazon MSK batch', mskEvent([kafkaRecord('orders', 0, 1, { a: 1 })])],
  ['a self-managed Kafka batch', selfManagedKafkaEvent([kafkaRecord('orders', 0, 1, { a: 1 })])]
]
const wholeEvents: Array<[string, unknown]> = [
  ...httpEventShapes.map(([name, shape]): [string, unknown] => [name, shape({ method: 'POST', key: 'k-1', body: '{}' })]),
  ['an S3 notification', { Records: [{ eventSource: 'aws:s3', eventName: 'ObjectCreated:Put' }] }],
  ['an SNS notification', { Records: [{ EventSource: 'aws:sns', Sns: { Message: '{}' } }] }],
  ['an EventBridge event', { 'detail-type': 'OrderPlaced', source: 'shop', detail: {} }],
  ['a direct invocation', { orderId: 'o-1' }],
  ['null', null]
]

describe('recognising a batch by its event sources alone', () => {
  test.each(batches)('%s is a batch of the source the engine would take it as', (_name, event) => {
    expect(batchModeOf(event)).toBe(sourceOf(event)?.mode)
    expect(batchModeOf(event)).toBeDefined()
  })

  test.each(wholeEvents)('%s is no batch, for the engine either', (_name, event) => {
    expect(batchModeOf(event)).toBeUndefined()
    expect(sourceOf(event)).toBeUndefined()
  })
})
