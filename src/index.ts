export { idempotency, idempotency as default, type IdempotencyMiddleware } from './idempotency.js'
export type { IdempotencyOptions, UnitOf } from './options.js'
export type { FailureDecision, FailureInfo, FailurePolicy, IdempotencyLogger } from './lifecycle/config.js'
export type { Selector } from './lifecycle/key.js'
export type { OutcomeKind, UnitOutcome } from './lifecycle/report.js'
export { DynamoDBStore, type DynamoDBStoreOptions, type DynamoDBSender } from './stores/dynamodb-store.js'
export { MemoryStore } from './stores/memory-store.js'
export type { IdempotencyStore, IdempotencyRecord, ClaimRecord, RecordStatus, TransactItem, TransactEntry, CommitResult } from './stores/store.js'
export { perRecord, type PerRecordOptions, type PerRecordHandler, type RecordTools } from './per-record.js'
export type { IdempotencyContext } from './lifecycle/transact.js'
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
