import type { ScanCommandInput, ScanCommandOutput } from '@aws-sdk/client-dynamodb'
import { IdempotencyConfigError, IdempotencyStoreError, type StoreOperation } from '../../errors.js'
import {
  inspectFrom, listFrom, releaseFrom, type ListOptions, type RecordView, type ReleaseOptions, type ReleaseResult
} from '../operator/records.js'
import type { ExpectedRecord, RecordPage, RecordTable } from '../operator/table.js'
import type { RecordStatus } from '../store.js'
import { tableAccessOf, type TableAccess } from './access.js'
import { checkedRecordOf } from './checked-item.js'
import { keyItem, type Item } from './items.js'
import { explainKeySchemaMismatch, isKeySchemaMismatch } from './table-check.js'
import type { DynamoDBStore } from './dynamodb-store.js'

export type { ListOptions, RecordView, ReleaseOptions, ReleaseResult }

/** A key no record has (records are `namespace#sha256`): reading it checks the table's key schema. */
const SCHEMA_PROBE_KEY = 'middy-idempotency key schema check'

/**
 * The operator's view of a DynamoDB store's table: `Scan` pages, a consistent `GetItem`, and a
 * `DeleteItem` conditioned on the token and status read (and a lapsed lease). Needs
 * `dynamodb:Scan`, `dynamodb:GetItem` and `dynamodb:DeleteItem` on the table; none of it is
 * loaded by a handler that does not import these functions.
 */
/** The store's records as the operator functions see them (internal: for them and the tests). */
export const recordTable = (store: DynamoDBStore): RecordTable => {
  const access = tableAccessOf(store)
  if (access === undefined) {
    throw new IdempotencyConfigError('the operator functions of middy-idempotency/dynamodb take a DynamoDBStore')
  }
  const { client, tableName, names: n, sortKeyValue } = access
  // A key of the wrong shape is said as the store says it (the table's schema, the option to set).
  const failed = async (
    operation: StoreOperation,
    request: string,
    key: string | undefined,
    error: unknown
  ): Promise<IdempotencyStoreError> => {
    const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
    const why = isKeySchemaMismatch(error)
      ? await explainKeySchemaMismatch(client, tableName, n, error)
      : `${name}: ${message}`
    const forKey = key === undefined ? '' : ` for key ${key}`
    return new IdempotencyStoreError(operation, `${request} on table ${tableName}${forKey} failed: ${why}`,
      { ...(key === undefined ? {} : { key }), cause: error })
  }
  const getItem = async (key: string): Promise<Item | undefined> => {
    const request = { TableName: tableName, Key: keyItem(n, sortKeyValue, key), ConsistentRead: true }
    return (await client.send('GetItem', request) as { Item?: Item }).Item
  }
  const read = async (key: string): Promise<Item | undefined> => {
    try {
      return await getItem(key)
    } catch (error) {
      throw await failed('read', 'GetItem', key, error)
    }
  }
  return {
    where: `table ${tableName}`,
    pages: (filter) => scan(access, filter, getItem, async (error) => await failed('read', 'Scan', undefined, error)),
    get: async (key) => {
      const item = await read(key)
      if (item === undefined) return undefined
      const record = checkedRecordOf(n, item)
      if (typeof record === 'string') {
        throw new IdempotencyStoreError('read', `${key} is not a middy-idempotency record: ${record}`, { key })
      }
      return record
    },
    deleteIf: async (key, expected) => {
      if (!deletable(expected)) {
        throw new IdempotencyConfigError('only an IN_PROGRESS or FAILED record, or a COMPLETED one by its token, ' +
          `is ever deleted, not ${String(expected.status)}`)
      }
      // The status set and a numeric expiry in the condition too: whatever was read, nothing but a
      // record of ours is deleted.
      const values: Item = {
        ':status': { S: expected.status },
        ':inProgress': { S: 'IN_PROGRESS' },
        ':failed': { S: 'FAILED' },
        ':completed': { S: 'COMPLETED' },
        ':number': { S: 'N' }
      }
      let condition = '#status IN (:inProgress, :failed, :completed) AND #status = :status ' +
        'AND attribute_type(#expiry, :number) AND '
      if (expected.leaseToken === undefined) condition += 'attribute_not_exists(#token)'
      else {
        condition += '#token = :token'
        values[':token'] = { S: expected.leaseToken }
      }
      const attributeNames: Record<string, string> = {
        '#status': n.statusAttr, '#token': n.leaseTokenAttr, '#expiry': n.expiryAttr
      }
      if (expected.leaseLapsedBefore !== undefined) {
        condition += ' AND #lease < :before'
        attributeNames['#lease'] = n.inProgressExpiryAttr
        values[':before'] = { N: String(expected.leaseLapsedBefore) }
      }
      try {
        await client.send('DeleteItem', {
          TableName: tableName,
          Key: keyItem(n, sortKeyValue, key),
          ConditionExpression: condition,
          ExpressionAttributeNames: attributeNames,
          ExpressionAttributeValues: values
        })
        return true
      } catch (error) {
        if ((error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException') return false
        throw await failed('release', 'DeleteItem', key, error)
      }
    }
  }
}

const RELEASABLE: readonly RecordStatus[] = ['IN_PROGRESS', 'FAILED']

/** An IN_PROGRESS or FAILED record; a COMPLETED one only fenced by its token (release --completed). */
const deletable = (expected: ExpectedRecord): boolean =>
  RELEASABLE.includes(expected.status) || (expected.status === 'COMPLETED' && expected.leaseToken !== undefined)

/**
 * The table's records, one `Scan` page at a time (1 MB each), strongly consistent; only this
 * store's items in a shared table, the others counted as skipped. A Scan never checks its
 * filter's key attributes against the table's schema (a sort key the table lacks just matches
 * nothing), so one GetItem of a key no record has checks the schema first.
 */
async function* scan (
  { client, tableName, names: n, sortKeyValue }: TableAccess,
  { status, pageSize }: { status?: string, pageSize?: number },
  getItem: (key: string) => Promise<unknown>,
  failed: (error: unknown) => Promise<Error>
): AsyncIterable<RecordPage> {
  try {
    await getItem(SCHEMA_PROBE_KEY)
  } catch (error) {
    throw await failed(error)
  }
  const filters = ['attribute_exists(#status)']
  const attributeNames: Record<string, string> = { '#status': n.statusAttr }
  const values: Item = {}
  if (n.sortKeyAttr !== undefined) {
    filters.push('#sk = :sk')
    attributeNames['#sk'] = n.sortKeyAttr
    values[':sk'] = { S: sortKeyValue }
  }
  if (status !== undefined) {
    filters.push('#status = :status')
    values[':status'] = { S: status }
  }
  let start: Record<string, unknown> | undefined
  do {
    const input: ScanCommandInput = {
      TableName: tableName,
      ConsistentRead: true,
      ...(pageSize === undefined ? {} : { Limit: pageSize }),
      FilterExpression: filters.join(' AND '),
      ExpressionAttributeNames: attributeNames,
      ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
      ...(start === undefined ? {} : { ExclusiveStartKey: start as Item })
    }
    let output: ScanCommandOutput
    try {
      output = await client.send('Scan', input) as ScanCommandOutput
    } catch (error) {
      throw await failed(error)
    }
    const page: RecordPage = { records: [], skipped: 0 }
    for (const item of output.Items ?? []) {
      const record = checkedRecordOf(n, item)
      if (typeof record === 'string') page.skipped++
      else page.records.push(record)
    }
    yield page
    start = output.LastEvaluatedKey
  } while (start !== undefined)
}

/**
 * Every record of the store's table (of one status, when asked), read `Scan` page by page.
 *
 * @example
 * ```ts
 * import { DynamoDBStore, listRecords } from 'middy-idempotency/dynamodb'
 *
 * const stuck = await listRecords(new DynamoDBStore({ tableName: 'IdempotencyStore' }), { status: 'IN_PROGRESS' })
 * ```
 */
export const listRecords = async (store: DynamoDBStore, options: ListOptions = {}): Promise<RecordView[]> =>
  await listFrom(recordTable(store), options)

/**
 * One record: status, expiry, lease, payload hash, and a preview of its result or error; undefined when there is none.
 *
 * @example
 * ```ts
 * const record = await inspectRecord(store, 'orders-consumer#9f86d081884c7d65…')
 * ```
 */
export const inspectRecord = async (
  store: DynamoDBStore,
  key: string,
  options: { now?: () => number, previewChars?: number } = {}
): Promise<RecordView | undefined> =>
  await inspectFrom(recordTable(store), key, options)

/**
 * Deletes a FAILED record, or an IN_PROGRESS one whose lease lapsed (a live lease only with
 * `force`), so that the next delivery runs; a COMPLETED one only with `completed` (and then
 * nothing else). Never an item that is not a record of this store (another library's, an
 * application's row): that throws an `IdempotencyStoreError` saying what it is missing. The
 * delete is conditioned on the token and status it read: a record completed or taken over
 * meanwhile is left alone.
 *
 * @example
 * ```ts
 * const result = await releaseRecord(store, key)
 * if (!result.released) console.log(`not released: ${result.reason}`)
 * // Run a completed payment's work again, only if it is still the record shown to the operator:
 * await releaseRecord(store, key, { completed: true, leaseToken: shown.leaseToken })
 * ```
 */
export const releaseRecord = async (
  store: DynamoDBStore,
  key: string,
  options: ReleaseOptions = {}
): Promise<ReleaseResult> =>
  await releaseFrom(recordTable(store), key, options)
