import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb'

/* The types of the DynamoDB store, apart so that its files import them from one place. */

/**
 * Anything with the SDK v3 `send`: a `DynamoDBClient` or a `DynamoDBDocumentClient`.
 *
 * @example
 * ```ts
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', client: DynamoDBDocumentClient.from(new DynamoDBClient({})) })
 * ```
 */
export interface DynamoDBSender {
  send: DynamoDBClient['send']
}

/**
 * Options of {@link DynamoDBStore}. Every attribute name can be changed, so the store
 * fits an existing table.
 *
 * @example
 * ```ts
 * const options: DynamoDBStoreOptions = { tableName: 'App', keyAttr: 'pk', sortKeyAttr: 'sk', sortKeyValue: 'idempotency' }
 * ```
 */
export interface DynamoDBStoreOptions {
  /** Name of the table. Required. */
  tableName: string
  /**
   * A `DynamoDBClient` or a `DynamoDBDocumentClient` (its low-level client is used; the
   * store marshals its own items). [a new `DynamoDBClient` from `clientConfig`]
   */
  client?: DynamoDBSender
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
