/**
 * The same consumer on Powertools for AWS Lambda (TypeScript), the way its documentation
 * makes each record of a batch idempotent: `makeIdempotent` around the record handler,
 * `BatchProcessor` + `processPartialResponse`, and `registerLambdaContext` on every
 * invocation so the in-progress lease follows the remaining time.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch'
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency'
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb'
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'
import type { HandlerSetup } from './ours.js'
import { work } from './work.js'

export const createTheirsHandler = ({ tableName, client, keyOnBody = false }: HandlerSetup) => {
  const processor = new BatchProcessor(EventType.SQS)
  // A JSON body has to be decoded with powertools_json() before JMESPath can read into it.
  const config = new IdempotencyConfig({ eventKeyJmesPath: keyOnBody ? 'powertools_json(body).orderId' : 'messageId' })
  const recordHandler = makeIdempotent(async (record: SQSRecord) => await work(record), {
    persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client }),
    config
  })
  return async (event: SQSEvent, context: Context) => {
    config.registerLambdaContext(context)
    return await processPartialResponse(event, recordHandler, processor, { context })
  }
}

export const handler = createTheirsHandler({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore', client: new DynamoDBClient({}) })
