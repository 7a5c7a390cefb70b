import type { MSKRecord } from 'aws-lambda'
import { streamTraits, type BatchSource } from './source.js'

const EVENT_SOURCES = ['aws:kafka', 'SelfManagedKafka']
const partitionOf = (record: MSKRecord): string => `${record.topic}-${record.partition}`

/**
 * Kafka: Amazon MSK (`aws:kafka`) and self-managed Apache Kafka (`SelfManagedKafka`). Records
 * come under `records["<topic>-<partition>"]`; Lambda takes failures as `{ partition, offset }`
 * and resumes each partition from its lowest reported offset, so order is kept per
 * topic-partition. Kafka counts no deliveries: every batch is read in bulk first.
 * https://docs.aws.amazon.com/lambda/latest/dg/kafka-retry-configurations.html
 */
export const kafka: BatchSource<MSKRecord> = {
  ...streamTraits,
  mode: 'kafka',
  eventName: 'a Kafka event (Amazon MSK or self-managed)',
  groupName: 'topic-partition',
  eventSource: 'aws:kafka',
  identityName: 'a topic, a partition and an offset',
  label: (record) => `record ${partitionOf(record)}@${record.offset}`,
  itemIdentifier: (record) =>
    typeof record?.topic === 'string' && Number.isSafeInteger(record.partition) && Number.isSafeInteger(record.offset)
      ? `${partitionOf(record)}@${record.offset}`
      : undefined,
  identifierValue: (record) => ({ partition: partitionOf(record), offset: record.offset }),
  identifierShape: "{ partition: '<topic>-<partition>', offset: <its offset, a number> }",
  readIdentifier: (identifier) => {
    const { partition, offset } = (identifier ?? {}) as { partition?: unknown, offset?: unknown }
    return typeof partition === 'string' && Number.isSafeInteger(offset)
      ? `${partition}@${String(offset)}`
      : undefined
  },
  orderingGroups: () => partitionOf,
  // The record's place in the log; keyScope adds its cluster.
  defaults: {
    key: (record) => ({ topic: record.topic, partition: record.partition, offset: record.offset }),
    payload: 'value'
  },
  encoded: ['value'],
  layout: {
    field: 'records',
    list: (event) => {
      const records = (event as { records?: unknown } | null | undefined)?.records
      if (records === null || typeof records !== 'object' || Array.isArray(records)) return undefined
      return Object.values(records).flatMap((partition) => Array.isArray(partition) ? partition : [partition])
    },
    shape: (records) => {
      const grouped: Record<string, MSKRecord[]> = {}
      for (const record of records) (grouped[partitionOf(record)] ??= []).push(record)
      return grouped
    }
  },
  recognise: (event) =>
    EVENT_SOURCES.includes((event as { eventSource?: string } | null | undefined)?.eventSource ?? ''),
  keyScope: (event) => {
    const e = event as { eventSourceArn?: unknown, bootstrapServers?: unknown } | null | undefined
    const cluster = e?.eventSourceArn ?? e?.bootstrapServers
    return typeof cluster === 'string' ? cluster : undefined
  }
}
