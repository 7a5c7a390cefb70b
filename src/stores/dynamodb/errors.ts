import { errorText } from '../../error-text.js'
import { IdempotencyStoreError, type StoreOperation } from '../../errors.js'

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
export const storeErrorOf = (
  tableName: string,
  operation: StoreOperation,
  key: string | undefined,
  error: unknown,
  explained?: string
): IdempotencyStoreError => {
  const { name, message = String(error) } = (error ?? {}) as { name?: string, message?: string }
  const why = explained ?? (name === 'ResourceNotFoundException'
    ? `table ${tableName} does not exist (or is not ACTIVE) in this account and region`
    : name === 'AccessDeniedException' || name === 'UnrecognizedClientException'
      ? `access denied: the function's role needs ${ACTION[operation]} on table ${tableName} (${message})`
      : errorText(error))
  const forKey = key === undefined ? '' : ` for key ${key}`
  return new IdempotencyStoreError(operation, `${operation} on table ${tableName}${forKey} failed: ${why}`,
    { key, cause: error })
}

/** A conditional write refused by its condition (single-item requests). */
export const isConditionFailure = (error: unknown): boolean =>
  (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException'
