/**
 * The README's SQS consumer (`perRecord` + `DynamoDBStore`, grouped writes on by default) on an
 * `@aws-lite/client` instead of the AWS SDK. Apart from `ours-lite.ts`, which builds its client at
 * import as a deployment does: `@aws-lite/client` resolves credentials when it is made, and the
 * bench makes its own clients, pointed at DynamoDB Local.
 */
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, perRecord } from '../../src/batch.js'
import { DynamoDBStore, type DynamoDBAwsLiteClient } from '../../src/dynamodb.js'
import { work } from './work.js'

export interface LiteSetup {
  tableName: string
  client: DynamoDBAwsLiteClient
  /** Key on `body.orderId` instead of the messageId (the in-batch duplicates workload). */
  keyOnBody?: boolean
}

export const createOursLiteHandler = ({ tableName, client, keyOnBody = false }: LiteSetup) =>
  middy<SQSEvent>()
    .use(sqsPartialBatchFailure())
    .use(idempotency({ store: new DynamoDBStore({ tableName, client }), ...(keyOnBody ? { key: 'body.orderId' } : {}) }))
    .handler(perRecord(work))
