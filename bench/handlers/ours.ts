/**
 * A typical SQS consumer on middy-idempotency, as the README shows it: `perRecord`, so each
 * record is completed the moment its own work ends (DESIGN §3.8). `createOursHandler`
 * lets the bench point it at a table of DynamoDB Local; `handler` is what a deployment
 * exports and what the bundle-size measurement bundles.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, perRecord } from '../../src/batch.js'
import { DynamoDBStore } from '../../src/dynamodb.js'
import { work } from './work.js'

export interface HandlerSetup {
  tableName: string
  client: DynamoDBClient
  /** Key on `body.orderId` instead of the messageId: producer duplicates share an order, not a messageId. */
  keyOnBody?: boolean
  /** The middleware's `maxStoreRequests`, left at its default (50) unless given. */
  maxStoreRequests?: number
}

export const createOursHandler = ({ tableName, client, keyOnBody = false, maxStoreRequests }: HandlerSetup) =>
  middy<SQSEvent>()
    .use(sqsPartialBatchFailure())
    .use(idempotency({
      store: new DynamoDBStore({ tableName, client }),
      ...(keyOnBody ? { key: 'body.orderId' } : {}),
      ...(maxStoreRequests === undefined ? {} : { maxStoreRequests })
    }))
    .handler(perRecord(work))

export const handler = createOursHandler({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore', client: new DynamoDBClient({}) })
