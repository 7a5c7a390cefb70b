import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import eventNormalizer from '@middy/event-normalizer'
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda'
import { IdempotencyFailedError, idempotency, perRecord } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

// In the future, so that DynamoDB Local's TTL never deletes what the test reads (docs/testing.md).
const START = Date.UTC(2030, 0, 1)
const MINUTE = 60_000

/**
 * A payment's INSERT as DynamoDB Streams delivers it (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html),
 * whose account id is a 64-bit number: `@middy/event-normalizer` makes it a BigInt, which no store can keep.
 */
const paymentInsert = (): DynamoDBRecord => ({
  eventID: 'c4ca4238a0b923820dcc509a6f75849b',
  eventName: 'INSERT',
  eventVersion: '1.1',
  eventSource: 'aws:dynamodb',
  awsRegion: 'us-east-1',
  dynamodb: {
    ApproximateCreationDateTime: 1428537600,
    Keys: { paymentId: { S: 'pay-1' } },
    NewImage: { paymentId: { S: 'pay-1' }, amount: { N: '2500' }, accountId: { N: '1234567890123456789' } },
    SequenceNumber: '4421584500000000017450439091',
    SizeBytes: 26,
    StreamViewType: 'NEW_AND_OLD_IMAGES'
  },
  eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/Payments/stream/2015-06-27T00:48:05.899'
})

describe.each(batchMiddyVersions)('a record kept FAILED because its work may have taken effect, %s', (_name, middy) => {
  test('is not run again when the stream retries it after expiresAfterSeconds: charged once in three hours', async () => {
    let clock = START
    let charges = 0
    const errors: unknown[] = []
    const handler = middy<DynamoDBStreamEvent>()
      .use(eventNormalizer())
      .use(idempotency({
        store: table.store, namespace: `kept-${Math.random()}`, now: () => clock, logger: recordingLogger(),
        onOutcome: (outcome) => { errors.push(outcome.error) }
      }))
      .handler(perRecord(async (record: DynamoDBRecord) => {
        charges++
        const image = record.dynamodb?.NewImage as Record<string, unknown>
        return { charged: image.amount, accountId: image.accountId }
      }))
    const invoke = handler as unknown as (e: unknown, c: unknown) => Promise<{ batchItemFailures: unknown[] }>
    // Lambda's stream mappings retry a failed batch until its records leave the stream, by default
    // (MaximumRetryAttempts -1): https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html
    const failures: unknown[] = []
    for (let minute = 0; minute <= 180; minute += 61) {
      clock = START + minute * MINUTE
      const answer = await invoke({ Records: [paymentInsert()] }, lambdaContext())
      failures.push(...answer.batchItemFailures)
    }
    expect(charges).toBe(1)
    expect(failures).toHaveLength(3)
    // The first delivery could not store its result; each retry meets the FAILED record and is refused.
    expect(errors.map((e) => (e as Error).name))
      .toEqual(['IdempotencyResponseError', 'IdempotencyFailedError', 'IdempotencyFailedError'])
    expect(errors[1]).toBeInstanceOf(IdempotencyFailedError)
  })
})
