/**
 * middy-idempotency/store: what a store author implements and calls, for a store of your own
 * (docs/stores.md): the store interface, the record and its states, what a call is told, the
 * limits a store states, what a commit takes and answers, and `isClaimable`. Types and one pure
 * function only: it loads no AWS SDK module and no Redis client.
 */
export {
  isClaimable,
  type ClaimRecord, type CommitOutcome, type CommitResult, type IdempotencyRecord, type IdempotencyStore,
  type RecordStatus, type StoreCallOptions, type StoreLimits
} from './stores/store.js'
export type { StoredError, StoreOperation } from './errors.js'
// Types only (nothing of the DynamoDB store is loaded): the write type of a DynamoDB-shaped `commit`.
export type { TransactEntry, TransactItem } from './stores/dynamodb/transact-types.js'
