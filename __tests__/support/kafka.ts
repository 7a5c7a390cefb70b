import type { MSKEvent, MSKRecord, SelfManagedKafkaEvent } from 'aws-lambda'

/** A Kafka record as Lambda delivers it: `value` base64 JSON. */
export const kafkaRecord = (topic: string, partition: number, offset: number, value: unknown): MSKRecord => ({
  topic,
  partition,
  offset,
  timestamp: 1545084650987,
  timestampType: 'CREATE_TIME',
  key: Buffer.from(`k-${offset}`).toString('base64'),
  value: Buffer.from(JSON.stringify(value)).toString('base64'),
  headers: []
})

/** An Amazon MSK event: records under `"<topic>-<partition>"`, in the order given. */
export const mskEvent = (records: MSKRecord[], cluster = 'arn:aws:kafka:us-east-1:123456789012:cluster/payments/abc-1'): MSKEvent => {
  const grouped: Record<string, MSKRecord[]> = {}
  for (const record of records) (grouped[`${record.topic}-${record.partition}`] ??= []).push(record)
  return { eventSource: 'aws:kafka', eventSourceArn: cluster, bootstrapServers: 'b-1.payments.kafka.us-east-1.amazonaws.com:9098', records: grouped }
}

/** A self-managed Apache Kafka event. */
export const selfManagedKafkaEvent = (records: MSKRecord[], bootstrapServers = 'kafka-1.internal:9092'): SelfManagedKafkaEvent => {
  const { records: grouped } = mskEvent(records)
  return { eventSource: 'SelfManagedKafka', bootstrapServers, records: grouped } as unknown as SelfManagedKafkaEvent
}
