/**
 * A typical HTTP handler on middy-idempotency (API Gateway, the `Idempotency-Key` header), as
 * the README shows it: the JSON body parsed, errors answered by @middy/http-error-handler.
 * Bundled for the size and cold-import measurement only.
 */
import middy from '@middy/core'
import httpErrorHandler from '@middy/http-error-handler'
import httpJsonBodyParser from '@middy/http-json-body-parser'
import type { APIGatewayProxyEvent } from 'aws-lambda'
import { idempotency } from '../../src/event.js'
import { DynamoDBStore } from '../../src/dynamodb.js'

export const handler = middy<APIGatewayProxyEvent>()
  .use(httpErrorHandler())
  .use(idempotency({ store: new DynamoDBStore({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore' }) }))
  .use(httpJsonBodyParser())
  .handler(async (event) => ({ statusCode: 201, body: JSON.stringify({ orderId: (event.body as unknown as { orderId?: string }).orderId }) }))
