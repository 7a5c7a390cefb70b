/**
 * middy-idempotency/batch: `idempotency` for SQS, Kinesis, DynamoDB Streams and Kafka batches, and
 * `perRecord`. The same middleware as the main entry's, without the whole-event and HTTP code a
 * batch consumer never runs. It exports the types its signatures spell out; the types a user
 * names (the options' store, logger, outcome), the errors and `MemoryStore` come from
 * `middy-idempotency`.
 */
import { batchHooks } from './middleware/batch-hooks.js'
import { idempotencyFor } from './middleware/idempotency.js'

export { perRecord } from './batch/per-record.js'
export type { IdempotencyMiddleware } from './middleware/idempotency.js'
export type {
  IdempotencyOptions, IdempotencyRequest, MiddyRequest, IdempotencyHandlerContext, UnitOf, FailureDecision, FailureInfo,
  BatchEvent, RecordOf, RecordTools, PerRecordOptions, PerRecordHandler
} from './types.js'

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
export const idempotency = idempotencyFor({ entry: 'middy-idempotency/batch', batch: batchHooks })
export default idempotency
