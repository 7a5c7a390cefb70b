import type { IdempotencyRecord } from '../store.js'
import { recordOf, type Item } from './items.js'
import type { AttributeNames } from './types.js'

const STATUSES = ['IN_PROGRESS', 'COMPLETED', 'FAILED']

/**
 * The record an item holds, or what makes it something else: another library's record in a
 * shared table, a business table's row, or a record written by a store whose attribute names
 * differ from these. The operator only ever acts on an item it recognises in full, so that a
 * release never deletes what it does not own.
 */
export const checkedRecordOf = (n: AttributeNames, item: Item): IdempotencyRecord | string => {
  const status = item[n.statusAttr]
  if (status?.S === undefined) return status === undefined ? `it has no status attribute '${n.statusAttr}' (statusAttr)` : `its status attribute '${n.statusAttr}' (statusAttr) is not a string`
  if (!STATUSES.includes(status.S)) return `its status ${JSON.stringify(status.S)} is none of ${STATUSES.join(', ')}`
  if (item[n.keyAttr]?.S === undefined) return `it has no string attribute '${n.keyAttr}' (keyAttr)`
  if (!isNumber(item[n.expiryAttr])) return `it has no number attribute '${n.expiryAttr}' (expiryAttr)`
  if (status.S === 'IN_PROGRESS') {
    if (!isNumber(item[n.inProgressExpiryAttr])) return `it is IN_PROGRESS with no number attribute '${n.inProgressExpiryAttr}' (inProgressExpiryAttr)`
    if (item[n.leaseTokenAttr]?.S === undefined) return `it is IN_PROGRESS with no string attribute '${n.leaseTokenAttr}' (leaseTokenAttr)`
  }
  return recordOf(n, item)
}

const isNumber = (value: Item[string] | undefined): boolean => value?.N !== undefined && Number.isFinite(Number(value.N))
