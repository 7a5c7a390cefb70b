/**
 * middy-idempotency: the middleware, perRecord, makeIdempotent, MemoryStore, the errors and the
 * types their users name.
 * No store client is loaded from here: each store has its own entry point
 * (`middy-idempotency/dynamodb`), so a function pays at cold start for the store it uses only.
 */
import { batchHooks } from './middleware/batch-hooks.js'
import { eventHooks } from './middleware/event-hooks.js'
import { idempotencyFor } from './middleware/idempotency.js'

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
export const idempotency = idempotencyFor({ entry: 'middy-idempotency', batch: batchHooks, event: eventHooks })
export default idempotency
// What a user of the middleware, perRecord and makeIdempotent names. The types a signature only
// spells out are exported by middy-idempotency/batch and /event (the middleware's request, the unit
// a key function gets), the store author's by middy-idempotency/store.
export type {
  IdempotencyOptions, PerRecordOptions, IdempotencyStore, IdempotencyLogger, LogLevel, Selector, FailurePolicy,
  OutcomeKind, OutcomeReport, RecordTools, IdempotencyContext, ProblemDetails
} from './types.js'
export { MemoryStore } from './stores/memory-store.js'
export { perRecord } from './batch/per-record.js'
export { makeIdempotent, type MakeIdempotentOptions } from './wrap/make-idempotent.js'
export {
  IdempotencyError,
  IdempotencyInProgressError,
  IdempotencyPayloadMismatchError,
  IdempotencyFailedError,
  IdempotencyKeyError,
  IdempotencyStoreError,
  IdempotencyResponseError,
  IdempotencyHeldBackError,
  IdempotencyTransactError,
  IdempotencyLeaseLostError,
  IdempotencyConfigError,
  HttpServerErrorResponse
} from './errors.js'
