/**
 * middy-idempotency/event: `idempotency` for whole events (HTTP requests with an
 * `Idempotency-Key`, EventBridge events, direct invocations). The same middleware as the main
 * entry's, without the batch engine a whole-event handler never runs. It exports the types its
 * signatures spell out; the types a user names (the options' store, logger, outcome), the errors
 * and `MemoryStore` come from `middy-idempotency`.
 */
import { eventHooks } from './middleware/event-hooks.js'
import { idempotencyFor } from './middleware/idempotency.js'

export type { IdempotencyMiddleware } from './middleware/idempotency.js'
export type {
  IdempotencyOptions, IdempotencyRequest, MiddyRequest, IdempotencyHandlerContext, UnitOf, FailureDecision, FailureInfo
} from './types.js'

/**
 * Makes a Middy handler of whole events idempotent (API Gateway, ALB and function URL requests
 * with an `Idempotency-Key`, EventBridge events, direct invocations), as `idempotency` from
 * `middy-idempotency` does, without carrying the batch engine it never runs. A batch (SQS, Kinesis,
 * DynamoDB Streams, Kafka, and those no entry takes per record: Amazon MQ, DocumentDB, an EventBridge
 * Pipes array) is refused with an `IdempotencyConfigError` unless `mode: 'event'` says to take it as
 * one unit: taken whole by mistake, one failed record would run all its neighbours again.
 *
 * @example
 * ```ts
 * import middy from '@middy/core'
 * import httpErrorHandler from '@middy/http-error-handler'
 * import httpJsonBodyParser from '@middy/http-json-body-parser'
 * import { idempotency } from 'middy-idempotency/event'
 * import { DynamoDBStore } from 'middy-idempotency/dynamodb'
 * import type { APIGatewayProxyEvent } from 'aws-lambda'
 *
 * export const handler = middy<APIGatewayProxyEvent>()
 *   .use(httpErrorHandler({ logger: false }))
 *   .use(idempotency({ store: new DynamoDBStore({ tableName: 'IdempotencyStore' }) }))
 *   .use(httpJsonBodyParser())
 *   .handler(async (event) => ({ statusCode: 201, body: JSON.stringify(await createOrder(event.body)) }))
 * ```
 */
export const idempotency = idempotencyFor({ entry: 'middy-idempotency/event', event: eventHooks })
export default idempotency
