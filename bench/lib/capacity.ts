/**
 * Capacity and on-demand cost. DynamoDB Local reports `ConsumedCapacity` for successful
 * PutItem, UpdateItem, DeleteItem and BatchGetItem (probed: a 3 KB put is 3 units, a
 * consistent BatchGetItem of 100 small items 100 units, of missing keys 0), but a refused
 * conditional write throws without it. For those the documented rule is applied: a failed
 * condition still consumes write units, one per started KB of the larger of the item sent
 * and the item already stored, at least one.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb'

/** us-east-1, Standard table class, on-demand list prices (after the November 2024 cut), USD per million request units. */
export const PRICES = {
  writeRequestUnit: 0.625,
  readRequestUnit: 0.125,
  // Looked up via https://airbyte.com/data-engineering-resources/dynamodb-pricing (quoting AWS's on-demand
  // pricing page after the November 2024 50% reduction); check https://aws.amazon.com/dynamodb/pricing/on-demand/.
  source: 'AWS DynamoDB on-demand pricing, us-east-1, Standard table class (after the Nov 2024 reduction)'
}

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8')

/** Size of one attribute value by DynamoDB's item-size rules (numbers: about 1 byte per 2 significant digits, plus 1). */
const valueSize = (value: AttributeValue): number => {
  if (value.S !== undefined) return utf8(value.S)
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\.|^0+|e.*$/gi, '').length / 2) + 1
  if (value.B !== undefined) return value.B.byteLength
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1
  if (value.M !== undefined) return 3 + itemSize(value.M)
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueSize(v), 0)
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + utf8(s), 0)
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + valueSize({ N: n }), 0)
  return 0
}

export const itemSize = (item: Record<string, AttributeValue>): number =>
  Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueSize(value), 0)

export const capacityOfFailedWrite = (sent: Record<string, AttributeValue> | undefined, existing: Record<string, AttributeValue> | undefined): number =>
  Math.max(1, Math.ceil(Math.max(sent === undefined ? 0 : itemSize(sent), existing === undefined ? 0 : itemSize(existing)) / 1024))

/**
 * Write units of a BatchExecuteStatement, which DynamoDB Local answers without ConsumedCapacity
 * (probed). Each statement is billed as its single-item write, refused or not: at least one unit
 * per started KB. The size taken is that of the statement's parameters (the item an INSERT writes,
 * the values an UPDATE sets): exact for the bench's records, all under 1 KB stored.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.multiplestatements.batching.html
 */
export const capacityOfStatements = (statements: Array<{ Parameters?: AttributeValue[] }> | undefined): number =>
  (statements ?? []).reduce((sum, s) => sum + Math.max(1, Math.ceil((s.Parameters ?? []).reduce((bytes, v) => bytes + valueSize(v), 0) / 1024)), 0)

/** On-demand cost in USD of one million records, from capacity units per record (consistent reads: 1 RRU per 4 KB). */
export const costPerMillion = (writeUnitsPerRecord: number, readUnitsPerRecord: number): number =>
  writeUnitsPerRecord * PRICES.writeRequestUnit + readUnitsPerRecord * PRICES.readRequestUnit
