import type { AttributeValue } from '@aws-sdk/client-dynamodb'
import type { ClaimRecord, IdempotencyRecord, RecordStatus } from '../store.js'
import type { AttributeNames } from './types.js'

/** An item as the low-level client reads and writes it. */
export type Item = Record<string, AttributeValue>

/** The record's key as DynamoDB takes it: the partition key, and the sort key when the table has one. */
export const keyItem = (names: AttributeNames, sortKeyValue: string, key: string): Item => {
  const item: Item = { [names.keyAttr]: { S: key } }
  if (names.sortKeyAttr !== undefined) item[names.sortKeyAttr] = { S: sortKeyValue }
  return item
}

/** The item a claim puts. */
export const claimItem = (n: AttributeNames, sortKeyValue: string, record: ClaimRecord): Item => {
  const item: Item = {
    ...keyItem(n, sortKeyValue, record.key),
    [n.statusAttr]: { S: record.status },
    [n.expiryAttr]: { N: String(record.expiry) },
    [n.inProgressExpiryAttr]: { N: String(record.inProgressExpiry) },
    [n.leaseTokenAttr]: { S: record.leaseToken }
  }
  if (record.payloadHash !== undefined) item[n.payloadHashAttr] = { S: record.payloadHash }
  return item
}

/** A stored item (marshalled, as DynamoDB returns it) as a record. */
export const recordOf = (n: AttributeNames, item: Item): IdempotencyRecord => {
  const record: IdempotencyRecord = {
    key: item[n.keyAttr]?.S ?? '',
    status: item[n.statusAttr]?.S as RecordStatus,
    expiry: Number(item[n.expiryAttr]?.N ?? 0)
  }
  const lease = item[n.inProgressExpiryAttr]?.N
  if (lease !== undefined) record.inProgressExpiry = Number(lease)
  const token = item[n.leaseTokenAttr]?.S
  if (token !== undefined) record.leaseToken = token
  const hash = item[n.payloadHashAttr]?.S
  if (hash !== undefined) record.payloadHash = hash
  const data = item[n.responseDataAttr]?.S
  if (data !== undefined) record.responseData = data
  const error = item[n.errorAttr]?.M
  if (error !== undefined) {
    record.error = {
      name: error.name?.S ?? 'Error',
      message: error.message?.S ?? '',
      ...(error.code?.S === undefined ? {} : { code: error.code.S })
    }
  }
  return record
}
