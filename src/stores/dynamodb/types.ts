import type { AttributeValue, DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb'
import type { DynamoDBAwsLiteClient, DynamoDBWire } from './wire.js'
import type { CommitOutcome, CommitResult, IdempotencyRecord } from '../store.js'
import type { TransactItem } from './transact-types.js'

/* The types of the DynamoDB store, apart so that its files import them from one place. */

/**
 * Anything with the SDK v3 `send`: a `DynamoDBClient` or a `DynamoDBDocumentClient`.
 *
 * @example
 * ```ts
 * const store = new DynamoDBStore({
 *   tableName: 'IdempotencyStore',
 *   client: DynamoDBDocumentClient.from(new DynamoDBClient({}))
 * })
 * ```
 */
export interface DynamoDBSender {
  send: DynamoDBClient['send']
}

export type { DynamoDBAwsLiteClient, DynamoDBOperation, DynamoDBWire } from './wire.js'

/**
 * Options of {@link DynamoDBStore}. Every attribute name can be changed, so the store
 * fits an existing table.
 *
 * @example
 * ```ts
 * const options: DynamoDBStoreOptions = {
 *   tableName: 'App', keyAttr: 'pk', sortKeyAttr: 'sk', sortKeyValue: 'idempotency'
 * }
 * ```
 */
export interface DynamoDBStoreOptions {
  /** Name of the table. Required. */
  tableName: string
  /**
   * A `DynamoDBClient`, a `DynamoDBDocumentClient` (its low-level client is used; the store
   * marshals its own items) or an `@aws-lite/client` instance (the same requests, without the
   * SDK). [a new `DynamoDBClient` from `clientConfig`]
   */
  client?: DynamoDBSender | DynamoDBAwsLiteClient
  /** Config for the client the store makes when `client` is not given. [`{}`] */
  clientConfig?: DynamoDBClientConfig
  /** Partition key attribute (type S). [`'idempotencyKey'`] */
  keyAttr?: string
  /** Sort key attribute (type S), for a table shared with other items. [none] */
  sortKeyAttr?: string
  /** Value written to `sortKeyAttr` on every idempotency record. [`'idempotency'`] */
  sortKeyValue?: string
  /** [`'status'`] */
  statusAttr?: string
  /** TTL attribute, epoch seconds: enable TTL on it. [`'expiry'`] */
  expiryAttr?: string
  /** End of the IN_PROGRESS lease, epoch milliseconds. [`'inProgressExpiry'`] */
  inProgressExpiryAttr?: string
  /** Fencing token of the current claim. [`'leaseToken'`] */
  leaseTokenAttr?: string
  /** [`'payloadHash'`] */
  payloadHashAttr?: string
  /** COMPLETED result as JSON (type S). [`'responseData'`] */
  responseDataAttr?: string
  /** FAILED error, a map of name and message. [`'error'`] */
  errorAttr?: string
  /**
   * The transaction writer, `transactions` from `middy-idempotency/dynamodb`: what `transact`
   * and `effects: 'transact-only'` need (one `TransactWriteItems` of your writes and the record's
   * completion). Opt-in, so that a function that never transacts does not load it; without it,
   * `effects: 'transact-only'` is refused too. [none: `transact` is refused]
   */
  transactions?: DynamoDBTransactions
  /**
   * Whether the writes of a batch are grouped: its claims, completions, failures and releases go
   * out as PartiQL `BatchExecuteStatement` requests of up to 25 statements, each fenced as its
   * single-item form. A write made alone (a whole event's) is still one single-item request. The
   * role needs `dynamodb:PartiQLInsert`, `PartiQLUpdate`, `PartiQLDelete` and `PartiQLSelect`;
   * without them the store warns once and sends single-item requests. `false` sends
   * single-item requests only. [`true`]
   */
  groupWrites?: boolean
}

/**
 * What a transaction writes to: the store's table, the record's key and attribute names.
 *
 * @example
 * ```ts
 * const target: CommitTarget = {
 *   client, tableName: 'IdempotencyStore', key: { idempotencyKey: { S: key } }, names, fromItem
 * }
 * ```
 */
export interface CommitTarget {
  /** How the store sends its requests, whatever its client. */
  client: DynamoDBWire
  /** The store's table. */
  tableName: string
  /** The record's key, marshalled (partition key, and sort key when there is one). */
  key: Record<string, AttributeValue>
  /** The store's attribute names, every default applied. */
  names: AttributeNames
  /** Reads a stored item (as DynamoDB returns it in a cancellation reason) into a record. */
  fromItem: (item: Record<string, AttributeValue>) => IdempotencyRecord
  /** Aborts the commit's requests once the lifecycle has given it up (see `StoreCallOptions`). */
  abortSignal?: AbortSignal
}

/**
 * The type of `transactions`, the DynamoDB transaction writer a {@link DynamoDBStore} is given
 * to `commit` (`transact`, `effects: 'transact-only'`). Pass the exported `transactions`; its
 * two functions are the store's, not a hook to implement.
 *
 * @example
 * ```ts
 * import { DynamoDBStore, transactions } from 'middy-idempotency/dynamodb'
 *
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', transactions })
 * ```
 */
export interface DynamoDBTransactions {
  /** One `TransactWriteItems`: `writes`, then the record's completion (a put on the claim's condition with `claim`). */
  commit: (
    target: CommitTarget,
    leaseToken: string,
    outcome: CommitOutcome,
    writes: readonly TransactItem[],
    claim?: { nowMs: number }
  ) => Promise<CommitResult>
  /** Why `write` is not a `TransactWriteItems` entry, or undefined when it is one. */
  checkWrite: (write: unknown) => string | undefined
}

/** The attribute names of a store's table, every default applied. */
export interface AttributeNames {
  keyAttr: string
  sortKeyAttr?: string
  statusAttr: string
  expiryAttr: string
  inProgressExpiryAttr: string
  leaseTokenAttr: string
  payloadHashAttr: string
  responseDataAttr: string
  errorAttr: string
}

export type { TransactEntry, TransactItem } from './transact-types.js'
