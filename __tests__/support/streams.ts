import type { DynamoDBRecord, DynamoDBStreamEvent, KinesisStreamEvent, KinesisStreamRecord } from 'aws-lambda'

let sequence = 49590338271490256608559692538361571095921575989136588898n

/** A Kinesis record as Lambda delivers it: `data` base64 JSON, a fresh sequence number. */
export const kinesisRecord = (data: unknown, partitionKey = 'pk-1'): KinesisStreamRecord => {
  const sequenceNumber = String(++sequence)
  return {
    kinesis: {
      kinesisSchemaVersion: '1.0',
      partitionKey,
      sequenceNumber,
      data: Buffer.from(JSON.stringify(data)).toString('base64'),
      approximateArrivalTimestamp: 1545084650.987
    },
    eventSource: 'aws:kinesis',
    eventVersion: '1.0',
    eventID: `shardId-000000000006:${sequenceNumber}`,
    eventName: 'aws:kinesis:record',
    invokeIdentityArn: 'arn:aws:iam::123456789012:role/lambda-role',
    awsRegion: 'us-east-2',
    eventSourceARN: 'arn:aws:kinesis:us-east-2:123456789012:stream/orders'
  }
}

/** A DynamoDB Streams INSERT/MODIFY record: marshalled keys and new image, a fresh sequence number. */
export const dynamodbRecord = (id: string, image: Record<string, string | number>, eventName: 'INSERT' | 'MODIFY' = 'INSERT'): DynamoDBRecord => {
  const SequenceNumber = String(4000000000000000000n + (++sequence % 1000000000000n))
  const marshalled = Object.fromEntries(Object.entries(image).map(([k, v]) => [k, typeof v === 'number' ? { N: String(v) } : { S: v }]))
  return {
    eventID: `${SequenceNumber.slice(-8)}c4ca4238a0b923820dcc509a6f75849b`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      Keys: { id: { S: id } },
      NewImage: { id: { S: id }, ...marshalled },
      SequenceNumber,
      SizeBytes: 26,
      StreamViewType: 'NEW_AND_OLD_IMAGES'
    },
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/Orders/stream/2026-11-23T00:00:00.000'
  }
}

export const kinesisEvent = (records: KinesisStreamRecord[]): KinesisStreamEvent => ({ Records: records })
export const dynamodbEvent = (records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records })

/** The same batch retried by Lambda from `fromIndex` on (it resumes at the lowest failure). */
export const retriedFrom = <T>(records: T[], fromIndex: number): T[] => records.slice(fromIndex).map((r) => structuredClone(r))
