import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { Receipt } from '../sam-app/src/sqs-consumer.js'

type Plain = string | number | { [name: string]: Plain } | undefined

/** One item of the idempotency table, as plain values. */
export type Item = Record<string, Plain>

// The store writes strings, numbers and (for a FAILED record's error) maps of strings.
const plain = (value: AttributeValue): Plain => {
  if (value.S !== undefined) return value.S
  if (value.N !== undefined) return Number(value.N)
  if (value.M !== undefined) {
    return Object.fromEntries(Object.entries(value.M).map(([name, inner]) => [name, plain(inner)]))
  }
  return undefined
}

/** Every item of the table (a demo table is small: one page). */
export const scanItems = async (client: DynamoDBClient, tableName: string): Promise<Item[]> => {
  const output = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))
  return (output.Items ?? []).map((item) =>
    Object.fromEntries(Object.entries(item).map(([name, value]) => [name, plain(value)])))
}

/** The receipts stored by COMPLETED records, by payment id: what a duplicate is answered with. */
export const storedReceipts = (items: Item[]): Map<string, Receipt> => {
  const receipts = new Map<string, Receipt>()
  for (const item of items) {
    if (item.status !== 'COMPLETED' || typeof item.responseData !== 'string') continue
    const receipt = JSON.parse(item.responseData) as Receipt
    receipts.set(receipt.paymentId, receipt)
  }
  return receipts
}
