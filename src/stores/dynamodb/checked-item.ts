import { isRecordStatus, RECORD_STATUSES, type IdempotencyRecord } from '../store.js'
import { keyProblem, lookalike } from '../operator/ownership.js'
import { recordOf, type Item } from './items.js'
import type { AttributeNames } from './types.js'

/**
 * The record an item holds, or what makes it something else: another library's record in a
 * shared table, a business table's row, or a record written by a store whose attribute names
 * differ from these. The operator only ever acts on an item it recognises in full, so that a
 * release never deletes what it does not own.
 */
export const checkedRecordOf = (n: AttributeNames, item: Item): IdempotencyRecord | string => {
  const key = item[n.keyAttr]?.S
  const problem = notOurs(n, item, key)
  if (problem === undefined) return recordOf(n, item)
  return `${problem}${key === undefined ? '' : lookalike(key, item[n.statusAttr]?.S)}`
}

/**
 * Two marks, each enough to refuse a record: the key's shape (ownership.ts), and the attributes
 * every record of ours has. A claim writes a lease token that completion and failure keep, so a
 * record of ours has one whatever its status; Powertools' records have none.
 */
const notOurs = (n: AttributeNames, item: Item, key: string | undefined): string | undefined => {
  if (key === undefined) return `it has no string attribute '${n.keyAttr}' (keyAttr)`
  const shape = keyProblem(key)
  if (shape !== undefined) return shape
  const status = item[n.statusAttr]
  if (status?.S === undefined) {
    return status === undefined
      ? `it has no status attribute '${n.statusAttr}' (statusAttr)`
      : `its status attribute '${n.statusAttr}' (statusAttr) is not a string`
  }
  if (!isRecordStatus(status.S)) {
    return `its status ${JSON.stringify(status.S)} is none of ${RECORD_STATUSES.join(', ')}`
  }
  if (!isNumber(item[n.expiryAttr])) return `it has no number attribute '${n.expiryAttr}' (expiryAttr)`
  if (status.S === 'IN_PROGRESS') {
    if (!isNumber(item[n.inProgressExpiryAttr])) {
      return `it is IN_PROGRESS with no number attribute '${n.inProgressExpiryAttr}' (inProgressExpiryAttr)`
    }
    if (item[n.leaseTokenAttr]?.S === undefined) {
      return `it is IN_PROGRESS with no string attribute '${n.leaseTokenAttr}' (leaseTokenAttr)`
    }
  }
  if (item[n.leaseTokenAttr]?.S === undefined) {
    return `it is ${status.S} with no string attribute '${n.leaseTokenAttr}' (leaseTokenAttr)`
  }
  return undefined
}

const isNumber = (value: Item[string] | undefined): boolean =>
  value?.N !== undefined && Number.isFinite(Number(value.N))
