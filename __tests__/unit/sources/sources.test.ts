import { describe, expect, test } from '@jest/globals'
import { dynamodbStreams } from '../../../src/sources/dynamodb-streams.js'
import { sourceByMode, sourceOf } from '../../../src/sources/index.js'
import { kinesis } from '../../../src/sources/kinesis.js'
import { sqs } from '../../../src/sources/sqs.js'
import { sqsRecord } from '../../support/sqs.js'
import { dynamodbRecord, kinesisRecord } from '../../support/streams.js'

describe('the table of sources', () => {
  test('auto mode recognises each source by its eventSource; anything else is a whole event', () => {
    expect(sourceOf({ Records: [sqsRecord('x')] })).toBe(sqs)
    expect(sourceOf({ Records: [kinesisRecord({ a: 1 })] })).toBe(kinesis)
    expect(sourceOf({ Records: [dynamodbRecord('1', {})] })).toBe(dynamodbStreams)
    expect(sourceOf({ Records: [] })).toBe(sqs)
    expect(sourceOf({ Records: [{ eventSource: 'aws:s3' }] })).toBeUndefined()
    expect(sourceOf({ detail: {} })).toBeUndefined()
  })

  test('a mode names its source', () => {
    expect(sourceByMode('sqs')).toBe(sqs)
    expect(sourceByMode('kinesis')).toBe(kinesis)
    expect(sourceByMode('dynamodb')).toBe(dynamodbStreams)
    expect(sourceByMode('event')).toBeUndefined()
  })
})

describe('SQS', () => {
  test('identity is the messageId; the receive count is the attempt', () => {
    const record = sqsRecord('x', { receiveCount: 3 })
    expect(sqs.itemIdentifier(record)).toBe(record.messageId)
    expect(sqs.attempt(record)).toBe(3)
    expect(sqs.attempt({ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: 'x' } })).toBe(1)
  })

  test('only a FIFO queue has ordering groups, its message groups', () => {
    const fifo = [sqsRecord('a', { groupId: 'A' }), sqsRecord('b', { groupId: 'B' })]
    expect(fifo.map(sqs.orderingGroups(fifo) as (r: unknown) => string)).toEqual(['A', 'B'])
    expect(sqs.orderingGroups([sqsRecord('a')])).toBeUndefined()
    // A standard "fair" queue carries a MessageGroupId but promises no order.
    const fair = { ...sqsRecord('a', { groupId: 'A' }), eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders' }
    expect(sqs.orderingGroups([fair])).toBeUndefined()
  })
})

describe('Kinesis', () => {
  test('identity is the sequence number Lambda expects; the partition key orders; eventID keys; the data is the payload', () => {
    const record = kinesisRecord({ orderId: 'o-1' }, 'customer-7')
    expect(kinesis.itemIdentifier(record)).toBe(record.kinesis.sequenceNumber)
    expect(kinesis.orderingGroups([record])?.(record)).toBe('customer-7')
    expect(kinesis.defaults).toEqual({ key: 'eventID', payload: 'kinesis.data' })
    expect(kinesis.attempt(record)).toBe(1)
    expect(kinesis.answer).toBe('native')
    expect(kinesis.alwaysRead).toBe(true)
  })

  test('a record without a sequence number has no identity', () => {
    expect(kinesis.itemIdentifier({ kinesis: {} } as never)).toBeUndefined()
  })
})

describe('DynamoDB Streams', () => {
  test('identity is dynamodb.SequenceNumber; the item keys order, marshalled or plain alike', () => {
    const record = dynamodbRecord('order-1', { total: 5 })
    expect(dynamodbStreams.itemIdentifier(record)).toBe(record.dynamodb?.SequenceNumber)
    const groupOf = dynamodbStreams.orderingGroups([record]) as (r: unknown) => string
    expect(groupOf(record)).toBe(groupOf(dynamodbRecord('order-1', { total: 6 }, 'MODIFY')))
    expect(groupOf(record)).not.toBe(groupOf(dynamodbRecord('order-2', { total: 5 })))
    expect(dynamodbStreams.defaults).toEqual({ key: 'eventID', payload: 'dynamodb' })
    expect(dynamodbStreams.answer).toBe('native')
  })
})
