import { errorText } from '../../observe/error-text.js'
import { IdempotencyStoreError, type StoreOperation } from '../../errors.js'
import type { AttributeNames } from './types.js'

// The IAM action each store request needs, named in an AccessDenied error.
const ACTION: Record<StoreOperation, string> = {
  claim: 'dynamodb:PutItem',
  complete: 'dynamodb:UpdateItem',
  fail: 'dynamodb:UpdateItem',
  release: 'dynamodb:DeleteItem',
  read: 'dynamodb:BatchGetItem',
  // TransactWriteItems is authorised per entry: UpdateItem here, and on the tables `transact` writes.
  commit: 'dynamodb:UpdateItem and dynamodb:GetItem (and the actions of your transact writes)'
}

/**
 * A failed DynamoDB request as an `IdempotencyStoreError` that says what to do about it: the
 * table that is missing, the IAM action the role lacks, the key schema the table should have.
 */
export const storeErrorOf = (tableName: string, names: AttributeNames, operation: StoreOperation, key: string | undefined, error: unknown, explained?: string): IdempotencyStoreError => {
  const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
  const what = `${operation} on table ${tableName}${key === undefined ? '' : ` for key ${key}`} failed`
  let why = errorText(error)
  if (explained !== undefined) {
    why = explained
  } else if (name === 'ResourceNotFoundException') {
    why = `table ${tableName} does not exist (or is not ACTIVE) in this account and region`
  } else if (name === 'AccessDeniedException' || name === 'UnrecognizedClientException') {
    why = `access denied: the function's role needs ${ACTION[operation]} on table ${tableName} (${message})`
  } else if (name === 'ValidationException' && /key element does not match the schema|required keys was not given a value|missing the key/i.test(message)) {
    const { keyAttr, sortKeyAttr } = names
    why = `the key schema of table ${tableName} does not match: expected partition key ${keyAttr} (S)` +
      (sortKeyAttr === undefined ? ' and no sort key' : ` and sort key ${sortKeyAttr} (S)`) + ` (${message})`
  }
  return new IdempotencyStoreError(operation, `${what}: ${why}`, { key, cause: error })
}
