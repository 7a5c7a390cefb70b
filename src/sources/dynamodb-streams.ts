import type { DynamoDBRecord } from 'aws-lambda'
import { canonicalJson } from '../keys/selector.js'
import { streamTraits, type BatchSource } from './source.js'

/**
 * DynamoDB Streams (docs/architecture.md: the batch flow, sources). Order is kept per item (its
 * `Keys`, marshalled or, after `@middy/event-normalizer`, plain: either way equal keys give equal
 * groups). Lambda resumes from the lowest sequence number reported failed; streams count no
 * deliveries.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html
 */
export const dynamodbStreams: BatchSource<DynamoDBRecord> = {
  ...streamTraits,
  mode: 'dynamodb',
  eventName: 'a DynamoDB Streams event',
  groupName: 'item',
  eventSource: 'aws:dynamodb',
  identityName: 'a dynamodb.SequenceNumber',
  identifierShape: '<its dynamodb.SequenceNumber>',
  label: (record) => `record ${record.dynamodb?.SequenceNumber}`,
  itemIdentifier: (record) =>
    typeof record.dynamodb?.SequenceNumber === 'string' ? record.dynamodb.SequenceNumber : undefined,
  orderingGroups: () => (record) => canonicalJson(record.dynamodb?.Keys ?? null),
  defaults: { key: 'eventID', payload: 'dynamodb' }
}
