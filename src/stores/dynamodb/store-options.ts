import type { StoreLimits } from '../store.js'
import type { AttributeNames, DynamoDBStoreOptions } from './types.js'

/* The options of DynamoDBStore and its defaults, and DynamoDB's limits as the store states them. */

/** The attribute names when not set, in the order errors name them (no sort key unless `sortKeyAttr` is set). */
export const ATTRIBUTES: AttributeNames = {
  keyAttr: 'idempotencyKey',
  sortKeyAttr: undefined,
  statusAttr: 'status',
  expiryAttr: 'expiry',
  inProgressExpiryAttr: 'inProgressExpiry',
  leaseTokenAttr: 'leaseToken',
  payloadHashAttr: 'payloadHash',
  responseDataAttr: 'responseData',
  errorAttr: 'error'
}

export const OPTION_NAMES = [
  'tableName', 'client', 'clientConfig', ...Object.keys(ATTRIBUTES), 'sortKeyValue', 'transactions', 'groupWrites'
]
// Fails to compile when an option is added to DynamoDBStoreOptions but not to the list above.
type UnlistedOption = Exclude<
  keyof DynamoDBStoreOptions,
  'tableName' | 'client' | 'clientConfig' | 'sortKeyValue' | 'transactions' | 'groupWrites' | keyof AttributeNames
>
const everyOptionListed: UnlistedOption extends never ? true : never = true
void everyOptionListed

/**
 * DynamoDB's own limits. An item holds 400 KB, names and values together; the rest of a record
 * (key, status, expiry, token, hash and their names) stays well under 2 KB. BatchGetItem reads
 * 100 keys; TransactWriteItems holds 100 entries (one is the completion) and 4 MB.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
 */
export const LIMITS: StoreLimits = {
  maxResponseBytes: 400 * 1024 - 2 * 1024,
  maxReadKeys: 100,
  transaction: { maxWrites: 99, maxBytes: 4 * 1024 * 1024 }
}

/**
 * With grouped writes, how many calls the store takes at once: the SDK's 50 sockets, each a
 * request of 25 statements. Without them, the middleware's default (50 requests).
 */
export const GROUPED_CONCURRENCY = 50 * 25
