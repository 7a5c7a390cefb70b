export { idempotency, idempotency as default, type IdempotencyMiddleware } from './idempotency.js'
export type {
  IdempotencyOptions, UnitOf, Selector, FailureDecision, FailureInfo, FailurePolicy, IdempotencyLogger, OutcomeKind, OutcomeReport,
  PerRecordOptions, PerRecordHandler, RecordTools, IdempotencyContext,
  IdempotencyStore, IdempotencyRecord, ClaimRecord, RecordStatus, TransactItem, TransactEntry, CommitOutcome, CommitResult
} from './types.js'
export { DynamoDBStore, type DynamoDBStoreOptions, type DynamoDBSender } from './stores/dynamodb-store.js'
export { MemoryStore } from './stores/memory-store.js'
export { perRecord } from './per-record.js'
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
  HttpServerErrorResponse,
  type StoredError,
  type StoreOperation
} from './errors.js'
