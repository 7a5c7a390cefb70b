import type { IdempotencyOptions } from './options.js'
import { batchFamily } from './batch-family.js'
import { eventFamily } from './event-family.js'
import { middlewareOf, type IdempotencyMiddleware } from './middleware.js'
import { setUp } from './setup.js'
import { untakenBatchOf } from '../sources/recognise.js'

export type { IdempotencyMiddleware }

/**
 * Makes a Middy handler idempotent, whatever its event: on an SQS, Kinesis, DynamoDB Streams or
 * Kafka batch, each record is claimed, run and completed on its own, and only the records that
 * really failed are reported; on any other event, the whole event is one unit of work. A handler
 * that takes only batches (or only whole events) carries less with the `idempotency` of
 * `middy-idempotency/batch` (or `middy-idempotency/event`).
 *
 * Put it after `@middy/sqs-partial-batch-failure` (whose `after` must run after ours),
 * and before middlewares that transform the event for the handler.
 *
 * @example
 * ```ts
 * import middy from '@middy/core'
 * import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
 * import { idempotency } from 'middy-idempotency'
 * import { DynamoDBStore } from 'middy-idempotency/dynamodb'
 * import type { SQSEvent } from 'aws-lambda'
 *
 * export const handler = middy<SQSEvent>()
 *   .use(sqsPartialBatchFailure())
 *   .use(idempotency({ store: new DynamoDBStore({ tableName: 'IdempotencyStore' }) }))
 *   .handler(async (event) => Promise.allSettled(event.Records.map(chargeCard)))
 * ```
 */
export const idempotency = <TEvent = any>(options: IdempotencyOptions<TEvent>): IdempotencyMiddleware => {
  const setup = setUp(options)
  const batch = batchFamily(setup)
  const event = eventFamily(setup)
  return middlewareOf(setup.config, (request) => {
    if (setup.resolved.mode === 'event') return event
    const hooks = batch(request)
    if (hooks !== undefined) return hooks
    // A batch no source here takes per record, taken whole, would run its finished records again
    // with the one that failed: refused unless mode: 'event' says that is what is meant.
    const untaken = untakenBatchOf(request.event)
    return untaken === undefined
      ? event
      : `idempotency: this is ${untaken}, which no idempotency middleware takes per record: run each record through makeIdempotent() from 'middy-idempotency', or set mode: 'event' to take the batch as one unit`
  })
}
