/**
 * A Kafka consumer on middy-idempotency (Amazon MSK), as the README shows it: `perRecord`, order
 * kept per topic-partition, Lambda's `{ batchItemFailures }` answered by the middleware itself.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import middy from '@middy/core'
import type { MSKEvent, MSKRecord } from 'aws-lambda'
import { idempotency, perRecord } from '../../src/batch.js'
import { DynamoDBStore } from '../../src/dynamodb.js'

export const createOursKafkaHandler = (
  { tableName, client, maxStoreRequests }: { tableName: string, client: DynamoDBClient, maxStoreRequests?: number }
) =>
  middy<MSKEvent>()
    .use(idempotency({
      store: new DynamoDBStore({ tableName, client }), ...(maxStoreRequests === undefined ? {} : { maxStoreRequests })
    }))
    .handler(perRecord(async (record: MSKRecord) => {
      await Promise.resolve()
      return { ok: true, offset: record.offset }
    }))

let nextOffset = 0

/** An MSK batch of `size` records of about half a KB each, spread over 50 partitions of one topic. */
export const kafkaBatch = (size: number, partitions = 50): MSKEvent => {
  const records: MSKEvent['records'] = {}
  for (let i = 0; i < size; i++) {
    const partition = i % partitions
    const offset = nextOffset++
    const value = JSON.stringify({ orderId: `order-${offset}`, amount: 1250, currency: 'EUR', customer: `c-${offset % 97}`, note: 'x'.repeat(200) })
    ;(records[`orders-${partition}`] ??= []).push({
      topic: 'orders', partition, offset, timestamp: Date.now(), timestampType: 'CREATE_TIME',
      key: Buffer.from(`k-${offset}`).toString('base64'), value: Buffer.from(value).toString('base64'), headers: []
    })
  }
  return { eventSource: 'aws:kafka', eventSourceArn: 'arn:aws:kafka:us-east-1:123456789012:cluster/bench/abc-1', bootstrapServers: 'b-1.bench:9098', records }
}
