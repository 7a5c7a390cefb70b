/**
 * middy-idempotency/dynamodb: the DynamoDB store. Its own entry point, so that only a function
 * that uses it loads `@aws-sdk/client-dynamodb`.
 */
export { DynamoDBStore } from './stores/dynamodb/dynamodb-store.js'
export { transactions } from './stores/dynamodb/transaction.js'
export type {
  AttributeNames, CommitTarget, DynamoDBAwsLiteClient, DynamoDBOperation, DynamoDBSender, DynamoDBStoreOptions,
  DynamoDBTransactions, DynamoDBWire, TransactEntry, TransactItem
} from './stores/dynamodb/types.js'
export {
  listRecords, inspectRecord, releaseRecord, type ListOptions, type RecordView, type ReleaseOptions, type ReleaseResult
} from './stores/dynamodb/operator.js'
export { createTable, type CreateTableOptions, type CreateTableResult } from './stores/dynamodb/create-table.js'
