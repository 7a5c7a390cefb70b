/**
 * The same HTTP handler on Powertools for AWS Lambda (TypeScript): its Middy middleware
 * `makeHandlerIdempotent`, keyed on the `Idempotency-Key` header with JMESPath, as its
 * documentation shows for API Gateway. Bundled for the size and cold-import measurement only.
 */
import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency'
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb'
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware'
import middy from '@middy/core'
import httpErrorHandler from '@middy/http-error-handler'
import httpJsonBodyParser from '@middy/http-json-body-parser'
import type { APIGatewayProxyEvent } from 'aws-lambda'

export const handler = middy<APIGatewayProxyEvent>()
  .use(httpErrorHandler())
  .use(makeHandlerIdempotent({
    persistenceStore: new DynamoDBPersistenceLayer({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore' }),
    config: new IdempotencyConfig({ eventKeyJmesPath: 'headers."Idempotency-Key"' })
  }))
  .use(httpJsonBodyParser())
  .handler(async (event) => ({ statusCode: 201, body: JSON.stringify({ orderId: (event.body as unknown as { orderId?: string }).orderId }) }))
