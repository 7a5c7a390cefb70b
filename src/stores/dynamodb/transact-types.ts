/* The write type of `transact` with a DynamoDB store: no SDK type, so that the root entry's
   declarations, which name it, need no SDK installed (a Redis-only project has none). */

/**
 * One write of `transact` with a DynamoDB store, in the SDK's `TransactWriteItems` entry shape
 * with native values, as `@aws-sdk/lib-dynamodb`'s `TransactWriteCommand` takes them (the store
 * marshals them itself).
 *
 * @example
 * ```ts
 * const reserve: TransactItem = {
 *   Update: {
 *     TableName: 'Stock', Key: { sku: 'A-1' }, UpdateExpression: 'ADD reserved :one',
 *     ConditionExpression: 'available >= :one', ExpressionAttributeValues: { ':one': 1 }
 *   }
 * }
 * ```
 */
export type TransactItem =
  | { Put: TransactEntry & { Item: Record<string, unknown> } }
  | { Update: TransactEntry & { Key: Record<string, unknown>, UpdateExpression: string } }
  | { Delete: TransactEntry & { Key: Record<string, unknown> } }
  | { ConditionCheck: TransactEntry & { Key: Record<string, unknown>, ConditionExpression: string } }

/**
 * What every `TransactItem` operation shares.
 *
 * @example
 * ```ts
 * const entry: TransactEntry = { TableName: 'Orders', ConditionExpression: 'attribute_not_exists(orderId)' }
 * ```
 */
export interface TransactEntry {
  TableName: string
  ConditionExpression?: string
  ExpressionAttributeNames?: Record<string, string>
  ExpressionAttributeValues?: Record<string, unknown>
  ReturnValuesOnConditionCheckFailure?: 'ALL_OLD' | 'NONE'
}
