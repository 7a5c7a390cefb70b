/**
 * middy-idempotency: the middleware, perRecord, MemoryStore, the errors and every public type.
 * No store client is loaded from here: each store has its own entry point
 * (`middy-idempotency/dynamodb`), so a function pays at cold start for the store it uses only.
 */
export { idempotency, idempotency as default, type IdempotencyMiddleware } from './middleware/idempotency.js'
export type {
  IdempotencyOptions, UnitOf, Selector, FailureDecision, FailureInfo, FailurePolicy, IdempotencyLogger, OutcomeKind, OutcomeReport,
  PerRecordOptions, PerRecordHandler, RecordTools, RecordOf, BatchEvent, IdempotencyContext, IdempotencyHandlerContext, IdempotencyRequest, ProblemDetails,
  IdempotencyStore, IdempotencyRecord, ClaimRecord, RecordStatus, StoreCallOptions, StoreLimits, TransactItem, TransactEntry, CommitOutcome, CommitResult
} from './types.js'
export { MemoryStore } from './stores/memory-store.js'
export { isClaimable } from './stores/store.js'
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
  HttpServerErrorResponse,
  type StoredError,
  type StoreOperation
} from './errors.js'
