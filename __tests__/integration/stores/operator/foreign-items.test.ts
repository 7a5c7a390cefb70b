import { afterEach, beforeEach, expect, test } from '@jest/globals'
import { GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb'
import { DynamoDBStore, inspectRecord, listRecords, releaseRecord } from '../../../../src/dynamodb.js'
import { freshTable } from '../../../support/dynamodb.js'
import { keyOf } from '../../../support/record-keys.js'

/**
 * Items of a table the operator functions did not write: another library's records in a shared
 * table, a business table's rows, half-written items. They are never released, nor listed as records.
 */

let table: Awaited<ReturnType<typeof freshTable>>
beforeEach(async () => { table = await freshTable() })
afterEach(async () => { await table.drop() })

const nowS = (): number => Math.floor(Date.now() / 1000)
const put = async (item: Record<string, AttributeValue>): Promise<void> => { await table.client.send(new PutItemCommand({ TableName: table.tableName, Item: item })) }
const stillThere = async (key: string): Promise<boolean> =>
  (await table.client.send(new GetItemCommand({ TableName: table.tableName, Key: { idempotencyKey: { S: key } }, ConsistentRead: true }))).Item !== undefined

const KEY_FOREIGN = keyOf('ns', 'foreign')
const KEY_PT = keyOf('ns', 'pt')
const KEY_OURS = keyOf('ns', 'ours')
const KEY_RENAMED = keyOf('ns', 'renamed')
const KEY_X = keyOf('ns', 'x')

const FOREIGN: Array<[string, Record<string, AttributeValue>]> = [
  // Powertools' record, its lease live: another library's work is running.
  ['a Powertools INPROGRESS record with a live lease', { status: { S: 'INPROGRESS' }, expiration: { N: String(nowS() + 3600) }, in_progress_expiration: { N: String(Date.now() + 600_000) } }],
  ['a business row', { orderId: { S: 'o-1' }, status: { S: 'PENDING' } }],
  ['an item with no status', { note: { S: 'x' } }],
  ['an IN_PROGRESS item with no lease token', { status: { S: 'IN_PROGRESS' }, expiry: { N: String(nowS() + 3600) }, inProgressExpiry: { N: String(Date.now() - 1000) } }],
  ['a FAILED item whose expiry is not a number', { status: { S: 'FAILED' }, expiry: { S: 'tomorrow' }, leaseToken: { S: 't' } }],
  ['an item whose status is not a string', { status: { N: '1' }, expiry: { N: String(nowS() + 3600) } }],
  // Powertools' COMPLETED record has our status word; a record of ours always keeps its lease token.
  ['a COMPLETED item with no lease token', { status: { S: 'COMPLETED' }, expiry: { N: String(nowS() + 3600) }, data: { S: '{"charged":1}' } }]
]

test.each(FOREIGN)('release refuses %s: not a middy-idempotency record, and the item stays', async (_what, item) => {
  await put({ idempotencyKey: { S: KEY_FOREIGN }, ...item })
  await expect(releaseRecord(table.store, KEY_FOREIGN)).rejects.toThrow(`${KEY_FOREIGN} is not a middy-idempotency record`)
  await expect(releaseRecord(table.store, KEY_FOREIGN, { force: true })).rejects.toThrow(`${KEY_FOREIGN} is not a middy-idempotency record`)
  expect(await stillThere(KEY_FOREIGN)).toBe(true)
})

test('inspect refuses an item that is not a record, saying what is wrong with it', async () => {
  await put({ idempotencyKey: { S: KEY_PT }, ...FOREIGN[0]?.[1] })
  await expect(inspectRecord(table.store, KEY_PT)).rejects.toThrow(`${KEY_PT} is not a middy-idempotency record: its status "INPROGRESS" is none of IN_PROGRESS, COMPLETED, FAILED`)
})

test('list skips the items that are not records and says how many it skipped', async () => {
  for (const [i, [, item]] of FOREIGN.entries()) await put({ idempotencyKey: { S: keyOf('ns', `foreign-${i}`) }, ...item })
  const token = 'tok'
  expect(await table.store.claim({ key: KEY_OURS, status: 'IN_PROGRESS', expiry: nowS() + 3600, inProgressExpiry: Date.now() + 60_000, leaseToken: token }, Date.now())).toBeUndefined()
  const skipped: number[] = []
  const views = await listRecords(table.store, { onPage: (_read, skippedSoFar) => skipped.push(skippedSoFar ?? -1) })
  expect(views.map((v) => v.key)).toEqual([KEY_OURS])
  // 'an item with no status' has no status attribute: the scan's filter leaves it out before it is counted.
  expect(skipped.at(-1)).toBe(FOREIGN.length - 1)
})

test('a record whose attributes the store renames is read only by a store set the same way', async () => {
  const renamed = new DynamoDBStore({ tableName: table.tableName, client: table.client, expiryAttr: 'expiration' })
  expect(await renamed.claim({ key: KEY_RENAMED, status: 'IN_PROGRESS', expiry: nowS() + 3600, inProgressExpiry: Date.now() - 1000, leaseToken: 't' }, Date.now())).toBeUndefined()
  await expect(inspectRecord(table.store, KEY_RENAMED)).rejects.toThrow(/not a middy-idempotency record: it has no number attribute 'expiry' \(expiryAttr\)/)
  expect(await inspectRecord(renamed, KEY_RENAMED)).toMatchObject({ status: 'IN_PROGRESS', expired: false })
})

test('list with a sort key on a table that has none is refused, naming the mismatch', async () => {
  const wrong = new DynamoDBStore({ tableName: table.tableName, client: table.client, sortKeyAttr: 'sk' })
  await expect(listRecords(wrong)).rejects.toThrow(/the table has partition key idempotencyKey \(S\) and no sort key.*remove sortKeyAttr/)
})

test('inspect without the sort key on a table that has one names the sort key to set', async () => {
  const sorted = await freshTable({ sortKeyAttr: 'sk' })
  try {
    const unsorted = new DynamoDBStore({ tableName: sorted.tableName, client: sorted.client })
    await expect(inspectRecord(unsorted, KEY_X)).rejects.toThrow(/set sortKeyAttr: 'sk'/)
  } finally {
    await sorted.drop()
  }
})
