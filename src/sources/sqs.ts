import type { SQSRecord } from 'aws-lambda'
import type { BatchSource } from './source.js'

// A FIFO queue's name ends in .fifo. Standard "fair" queues carry a MessageGroupId too but
// promise no order, so the group id alone only counts when the record has no source ARN.
const isFifo = (record: SQSRecord): boolean =>
  typeof record.eventSourceARN === 'string'
    ? record.eventSourceARN.endsWith('.fifo')
    : record.attributes?.MessageGroupId !== undefined

/**
 * SQS (docs/architecture.md: the batch flow): a record is its `messageId`; a FIFO queue keeps order within a message
 * group; `ApproximateReceiveCount` counts deliveries; `@middy/sqs-partial-batch-failure`
 * turns the settled array into `batchItemFailures`.
 */
export const sqs: BatchSource<SQSRecord> = {
  mode: 'sqs',
  eventName: 'an SQS event',
  groupName: 'message group',
  eventSource: 'aws:sqs',
  identityName: 'a string messageId',
  identifierShape: '<its messageId>',
  label: (record) => `record ${record.messageId}`,
  itemIdentifier: (record) => typeof record?.messageId === 'string' ? record.messageId : undefined,
  orderingGroups: (records) => records.some(isFifo) ? (record) => record.attributes?.MessageGroupId ?? '' : undefined,
  attempt: (record) => {
    const count = Number(record.attributes?.ApproximateReceiveCount)
    return Number.isSafeInteger(count) && count > 0 ? count : 1
  },
  defaults: { key: 'messageId', payload: 'body' },
  answer: 'settled'
}
