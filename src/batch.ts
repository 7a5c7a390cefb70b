/**
 * middy-idempotency/batch: `idempotency` for SQS, Kinesis, DynamoDB Streams and Kafka batches, and
 * `perRecord`. The same middleware as the main entry's, without the whole-event and HTTP code a
 * batch consumer never runs. Types, errors and `MemoryStore` come from `middy-idempotency`.
 */
export { idempotency, idempotency as default } from './middleware/batch-only.js'
export { perRecord } from './batch/per-record.js'
export type { IdempotencyMiddleware } from './middleware/middleware.js'
export type { IdempotencyOptions, IdempotencyRequest, BatchEvent, RecordOf, RecordTools, PerRecordOptions, PerRecordHandler } from './types.js'
