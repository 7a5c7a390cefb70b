import { IdempotencyConfigError } from '../errors.js'
import { batchModeOf, untakenBatchOf } from '../sources/recognise.js'
import type { IdempotencyOptions } from './options.js'
import { eventFamily } from './event-family.js'
import { middlewareOf, type IdempotencyMiddleware } from './middleware.js'
import { setUp } from './setup.js'

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
export const idempotency = <TEvent = any>(options: IdempotencyOptions<TEvent>): IdempotencyMiddleware => {
  const setup = setUp(options)
  const { mode } = setup.resolved
  if (mode !== 'auto' && mode !== 'event') {
    throw new IdempotencyConfigError(`idempotency: mode '${mode}' needs idempotency from 'middy-idempotency' or 'middy-idempotency/batch'; the one from 'middy-idempotency/event' takes whole events only`)
  }
  const event = eventFamily(setup)
  return middlewareOf(setup.config, (request) => {
    if (mode === 'event') return event
    const batch = batchModeOf(request.event)
    if (batch !== undefined) {
      return `idempotency from 'middy-idempotency/event' takes whole events, and this is a ${batch} batch: import idempotency and perRecord from 'middy-idempotency/batch' (or 'middy-idempotency'), or set mode: 'event' to take the batch as one unit`
    }
    const untaken = untakenBatchOf(request.event)
    return untaken === undefined
      ? event
      : `idempotency from 'middy-idempotency/event' takes whole events, and this is ${untaken}, which no idempotency middleware takes per record: run each record through makeIdempotent() from 'middy-idempotency', or set mode: 'event' to take the batch as one unit`
  })
}
