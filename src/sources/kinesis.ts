import type { KinesisStreamRecord } from 'aws-lambda'
import { streamTraits, type BatchSource } from './source.js'

/**
 * Kinesis Data Streams (docs/architecture.md: the batch flow, sources). Lambda resumes a shard
 * from the lowest sequence number reported failed, so order is kept per partition key: a failure
 * holds back the rest of its key's records. Kinesis counts no deliveries, so every batch is read
 * in bulk first.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html
 */
export const kinesis: BatchSource<KinesisStreamRecord> = {
  ...streamTraits,
  mode: 'kinesis',
  eventName: 'a Kinesis event',
  groupName: 'partition key',
  eventSource: 'aws:kinesis',
  identityName: 'a kinesis.sequenceNumber',
  identifierShape: '<its kinesis.sequenceNumber>',
  label: (record) => `record ${record.kinesis?.sequenceNumber}`,
  itemIdentifier: (record) =>
    typeof record.kinesis?.sequenceNumber === 'string' ? record.kinesis.sequenceNumber : undefined,
  orderingGroups: () => (record) => String(record.kinesis?.partitionKey ?? ''),
  defaults: { key: 'eventID', payload: 'kinesis.data' },
  encoded: ['kinesis.data']
}
