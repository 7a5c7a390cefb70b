/**
 * The three consumers of the "timeout in a batch" workload (issue 7, item 4), each under a
 * real Middy early timeout (`timeoutEarlyInMillis`), so that what happens at the deadline is
 * what Middy does, not something the bench imitates:
 * - `ours per record`: `perRecord`, the handler the README recommends;
 * - `ours allSettled`: the `Promise.allSettled(event.Records.map(fn))` handler, which completes
 *   every record in `after`, i.e. only once the whole batch has returned;
 * - `theirs`: Powertools' per-record wrapper, `makeIdempotent` + `BatchProcessor` +
 *   `processPartialResponse`, inside the same Middy stack.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch'
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency'
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from '../../src/index.js'
import { DynamoDBStore } from '../../src/dynamodb.js'

export type TimeoutContender = 'ours per record' | 'ours allSettled' | 'theirs'
export const TIMEOUT_CONTENDERS: TimeoutContender[] = ['ours per record', 'ours allSettled', 'theirs']

export type RecordWork = (record: SQSRecord) => Promise<string>
export type Invoke = (event: SQSEvent, context: Context) => Promise<unknown>

export interface TimeoutSetup {
  tableName: string
  client: DynamoDBClient
  work: RecordWork
  timeoutEarlyInMillis: number
}

export const createTimeoutConsumer = (contender: TimeoutContender, { tableName, client, work, timeoutEarlyInMillis }: TimeoutSetup): Invoke => {
  if (contender === 'theirs') {
    const processor = new BatchProcessor(EventType.SQS)
    const config = new IdempotencyConfig({ eventKeyJmesPath: 'messageId' })
    const recordHandler = makeIdempotent(work, { persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client }), config })
    return middy<SQSEvent>({ timeoutEarlyInMillis }).handler(async (event, context) => {
      // So that each record's in-progress lease ends with the invocation's deadline, as ours does.
      config.registerLambdaContext(context)
      return await processPartialResponse(event, recordHandler, processor, { context })
    }) as unknown as Invoke
  }
  const stack = middy<SQSEvent>({ timeoutEarlyInMillis })
    .use(sqsPartialBatchFailure({ logger: false as never }))
    // The lost leases and timeouts of this workload are expected: keep the bench's output clean.
    .use(idempotency({ store: new DynamoDBStore({ tableName, client }), logger: false }))
  return (contender === 'ours per record'
    ? stack.handler(perRecord(work))
    : stack.handler(async (event) => await Promise.allSettled(event.Records.map(work)))) as unknown as Invoke
}
