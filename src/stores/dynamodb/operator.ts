import { DeleteItemCommand, GetItemCommand, ScanCommand, type ScanCommandInput } from '@aws-sdk/client-dynamodb'
import { IdempotencyConfigError, IdempotencyStoreError, type StoreOperation } from '../../errors.js'
import { inspectFrom, listFrom, releaseFrom, type ListOptions, type RecordView, type ReleaseResult } from '../../operator/records.js'
import type { RecordTable } from '../../operator/table.js'
import { tableAccessOf, type TableAccess } from './access.js'
import { keyItem, recordOf, type Item } from './items.js'
import type { DynamoDBStore } from './dynamodb-store.js'

export type { ListOptions, RecordView, ReleaseResult }

/**
 * The operator's view of a DynamoDB store's table: `Scan` pages, a consistent `GetItem`, and a
 * `DeleteItem` conditioned on the token and status read (and a lapsed lease). Needs
 * `dynamodb:Scan`, `dynamodb:GetItem` and `dynamodb:DeleteItem` on the table; none of it is
 * loaded by a handler that does not import these functions.
 */
/** The store's records as the operator functions see them (internal: for them and the tests). */
export const recordTable = (store: DynamoDBStore): RecordTable => {
  const access = tableAccessOf(store)
  if (access === undefined) throw new IdempotencyConfigError('the operator functions of middy-idempotency/dynamodb take a DynamoDBStore')
  const { client, tableName, names: n, sortKeyValue } = access
  const failed = (operation: StoreOperation, request: string, key: string | undefined, error: unknown): IdempotencyStoreError => {
    const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
    return new IdempotencyStoreError(operation, `${request} on table ${tableName}${key === undefined ? '' : ` for key ${key}`} failed: ${name}: ${message}`, { ...(key === undefined ? {} : { key }), cause: error })
  }
  return {
    where: `table ${tableName}`,
    pages: (filter) => scan(access, filter, (error) => failed('read', 'Scan', undefined, error)),
    get: async (key) => {
      try {
        const output = await client.send(new GetItemCommand({ TableName: tableName, Key: keyItem(n, sortKeyValue, key), ConsistentRead: true }))
        return output.Item === undefined ? undefined : recordOf(n, output.Item)
      } catch (error) {
        throw failed('read', 'GetItem', key, error)
      }
    },
    deleteIf: async (key, expected) => {
      const values: Item = { ':status': { S: expected.status } }
      let condition = '#status = :status AND '
      if (expected.leaseToken === undefined) condition += 'attribute_not_exists(#token)'
      else {
        condition += '#token = :token'
        values[':token'] = { S: expected.leaseToken }
      }
      const attributeNames: Record<string, string> = { '#status': n.statusAttr, '#token': n.leaseTokenAttr }
      if (expected.leaseLapsedBefore !== undefined) {
        condition += ' AND #lease < :before'
        attributeNames['#lease'] = n.inProgressExpiryAttr
        values[':before'] = { N: String(expected.leaseLapsedBefore) }
      }
      try {
        await client.send(new DeleteItemCommand({
          TableName: tableName, Key: keyItem(n, sortKeyValue, key), ConditionExpression: condition, ExpressionAttributeNames: attributeNames, ExpressionAttributeValues: values
        }))
        return true
      } catch (error) {
        if ((error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException') return false
        throw failed('release', 'DeleteItem', key, error)
      }
    }
  }
}

/** The table's records, one `Scan` page at a time (1 MB each), strongly consistent; only this store's items in a shared table. */
async function* scan ({ client, tableName, names: n, sortKeyValue }: TableAccess, { status, pageSize }: { status?: string, pageSize?: number }, failed: (error: unknown) => Error): AsyncIterable<ReturnType<typeof recordOf>[]> {
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
    let output
    try {
      output = await client.send(new ScanCommand(input))
    } catch (error) {
      throw failed(error)
    }
    yield (output.Items ?? []).map((item) => recordOf(n, item))
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
export const listRecords = async (store: DynamoDBStore, options: ListOptions = {}): Promise<RecordView[]> => await listFrom(recordTable(store), options)

/**
 * One record: status, expiry, lease, payload hash, and a preview of its result or error; undefined when there is none.
 *
 * @example
 * ```ts
 * const record = await inspectRecord(store, 'orders-consumer#9f86d081884c7d65…')
 * ```
 */
export const inspectRecord = async (store: DynamoDBStore, key: string, options: { now?: () => number, previewChars?: number } = {}): Promise<RecordView | undefined> =>
  await inspectFrom(recordTable(store), key, options)

/**
 * Deletes a FAILED record, or an IN_PROGRESS one whose lease lapsed (a live lease only with
 * `force`), so that the next delivery runs; never a COMPLETED one. The delete is conditioned on
 * the token and status it read: a record completed or taken over meanwhile is left alone.
 *
 * @example
 * ```ts
 * const result = await releaseRecord(store, key)
 * if (!result.released) console.log(`not released: ${result.reason}`)
 * ```
 */
export const releaseRecord = async (store: DynamoDBStore, key: string, options: { force?: boolean, now?: () => number } = {}): Promise<ReleaseResult> =>
  await releaseFrom(recordTable(store), key, options)
