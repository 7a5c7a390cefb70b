import { IdempotencyConfigError } from '../errors.js'
import { untakenBatchOf } from '../sources/recognise.js'
import type { IdempotencyOptions } from './options.js'
import { batchFamily } from './batch-family.js'
import { middlewareOf, type IdempotencyMiddleware } from './middleware.js'
import { setUp } from './setup.js'

/**
 * Makes a Middy handler of SQS, Kinesis, DynamoDB Streams or Kafka batches idempotent per record,
 * as `idempotency` from `middy-idempotency` does, without carrying whole-event and HTTP code it
 * never runs. Any other event is refused with an `IdempotencyConfigError` (nothing claimed, nothing
 * acknowledged).
 *
 * @example
 * ```ts
 * import middy from '@middy/core'
 * import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
 * import { idempotency, perRecord } from 'middy-idempotency/batch'
 * import { DynamoDBStore } from 'middy-idempotency/dynamodb'
 * import type { SQSEvent } from 'aws-lambda'
 *
 * export const handler = middy<SQSEvent>()
 *   .use(sqsPartialBatchFailure({ logger: () => {} }))
 *   .use(idempotency({ store: new DynamoDBStore({ tableName: 'IdempotencyStore' }) }))
 *   .handler(perRecord<SQSEvent>(async (record, { signal }) => chargeCard(record, { signal })))
 * ```
 */
export const idempotency = <TEvent = any>(options: IdempotencyOptions<TEvent>): IdempotencyMiddleware => {
  const setup = setUp(options)
  if (setup.resolved.mode === 'event') {
    throw new IdempotencyConfigError("idempotency: mode 'event' needs idempotency from 'middy-idempotency' or 'middy-idempotency/event'; the one from 'middy-idempotency/batch' takes batches only")
  }
  const batch = batchFamily(setup)
  return middlewareOf(setup.config, (request) => {
    const adapter = batch(request)
    if (adapter !== undefined) return adapter
    const untaken = untakenBatchOf(request.event)
    return untaken === undefined
      ? "idempotency from 'middy-idempotency/batch' takes SQS, Kinesis, DynamoDB Streams and Kafka batches, and this event is none: import idempotency from 'middy-idempotency/event' (whole events, HTTP) or 'middy-idempotency' (every event)"
      : `idempotency from 'middy-idempotency/batch' takes SQS, Kinesis, DynamoDB Streams and Kafka batches, and this is ${untaken}, which no idempotency middleware takes per record: run each record through makeIdempotent() from 'middy-idempotency', or take the batch as one unit with mode: 'event' on the idempotency of 'middy-idempotency/event'`
  })
}
