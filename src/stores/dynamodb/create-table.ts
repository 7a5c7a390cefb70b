import type { TableDescription } from '@aws-sdk/client-dynamodb'
import { IdempotencyConfigError, IdempotencyStoreError } from '../../errors.js'
import { tableAccessOf } from './access.js'
import type { AttributeNames } from './types.js'
import type { DynamoDBWire } from './wire.js'
import type { DynamoDBStore } from './dynamodb-store.js'

/** What {@link createTable} found or made: a table with the store's schema, ACTIVE, TTL on its expiry attribute. */
export interface CreateTableResult {
  /** The store's table. */
  tableName: string
  /** True when this call created the table; false when it was there already with the store's schema. */
  created: boolean
  /** `enabled`: this call turned TTL on; `was-enabled`: it already was (or was being turned on). */
  ttl: 'enabled' | 'was-enabled'
  /** The partition key attribute (type S): the store's `keyAttr`. */
  partitionKey: string
  /** The sort key attribute (type S), when the store has `sortKeyAttr`. */
  sortKey?: string
  /** The attribute TTL deletes by: the store's `expiryAttr`. */
  ttlAttribute: string
}

/** Options of {@link createTable}. */
export interface CreateTableOptions {
  /** How long to wait for the table to become ACTIVE, in ms. [300 000] */
  waitMs?: number
  /** The pause between two looks at a table still CREATING, in ms. [1000] */
  pollMs?: number
}

const KEY_TYPE = 'S'

/**
 * Creates the store's table when there is none: its partition key (and sort key, when the store
 * has one), both strings; on-demand (PAY_PER_REQUEST); TTL on its expiry attribute. Resolves once
 * the table is ACTIVE. A table that is already there with that key schema is kept, and its TTL
 * turned on when it is off. A table with another key schema, or TTL on another attribute, is
 * refused with an `IdempotencyConfigError` naming each difference: nothing is changed. Needs
 * `dynamodb:CreateTable`, `DescribeTable`, `DescribeTimeToLive` and `UpdateTimeToLive`.
 * For local work (DynamoDB Local through `AWS_ENDPOINT_URL_DYNAMODB`) and scripts; production
 * tables belong in infrastructure code.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-how-to.html
 *
 * @example
 * ```ts
 * import { DynamoDBStore, createTable } from 'middy-idempotency/dynamodb'
 *
 * const { created } = await createTable(new DynamoDBStore({ tableName: 'IdempotencyStore' }))
 * ```
 */
export const createTable = async (
  store: DynamoDBStore,
  options: CreateTableOptions = {}
): Promise<CreateTableResult> => {
  const access = tableAccessOf(store)
  if (access === undefined) throw new IdempotencyConfigError('createTable takes a DynamoDBStore')
  const { client, tableName, names } = access
  const call = async <T>(request: string, send: () => Promise<T>): Promise<T> => {
    try {
      return await send()
    } catch (error) {
      const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
      throw new IdempotencyStoreError('read', `${request} on table ${tableName} failed: ${name}: ${message}`,
        { cause: error })
    }
  }
  let table = await describe(client, tableName, call)
  let created = false
  if (table === undefined) {
    created = await call('CreateTable', async () => await create(client, tableName, names))
    table = await describe(client, tableName, call)
  }
  const differences = keyDifferences(table, names)
  if (differences.length > 0) throw mismatch(tableName, differences)
  await untilActive(client, tableName, table, options, call)
  const ttl = await call('DescribeTimeToLive', async () =>
    (await client.send('DescribeTimeToLive', { TableName: tableName }))?.TimeToLiveDescription)
  const status = ttl?.TimeToLiveStatus ?? 'DISABLED'
  const on = status === 'ENABLED' || status === 'ENABLING'
  if (on && ttl?.AttributeName !== names.expiryAttr) {
    throw mismatch(tableName, [
      `its TTL is on attribute ${String(ttl?.AttributeName)}, not on expiryAttr '${names.expiryAttr}': ` +
      `set expiryAttr: '${String(ttl?.AttributeName)}' if it holds epoch seconds`
    ])
  }
  // DynamoDB refuses to turn TTL on while it is being turned off; said, not waited for (it can take an hour).
  if (status === 'DISABLING') {
    throw mismatch(tableName,
      [`its TTL is being disabled (DISABLING): enable it on '${names.expiryAttr}' once that is done`])
  }
  if (!on) {
    await call('UpdateTimeToLive', async () => await client.send('UpdateTimeToLive', {
      TableName: tableName, TimeToLiveSpecification: { AttributeName: names.expiryAttr, Enabled: true }
    }))
  }
  return {
    tableName,
    created,
    ttl: on ? 'was-enabled' : 'enabled',
    partitionKey: names.keyAttr,
    ...(names.sortKeyAttr === undefined ? {} : { sortKey: names.sortKeyAttr }),
    ttlAttribute: names.expiryAttr
  }
}

type Call = <T>(request: string, send: () => Promise<T>) => Promise<T>

const describe = async (client: DynamoDBWire, tableName: string, call: Call): Promise<TableDescription | undefined> => {
  try {
    return (await client.send('DescribeTable', { TableName: tableName }))?.Table
  } catch (error) {
    if ((error as { name?: string } | undefined)?.name === 'ResourceNotFoundException') return undefined
    return await call('DescribeTable', async () => { throw error })
  }
}

/** True once created; false when another caller created it first (it is then checked like any table that exists). */
const create = async (client: DynamoDBWire, tableName: string, names: AttributeNames): Promise<boolean> => {
  const keys = [{ AttributeName: names.keyAttr, KeyType: 'HASH' as const }]
  if (names.sortKeyAttr !== undefined) keys.push({ AttributeName: names.sortKeyAttr, KeyType: 'RANGE' as never })
  try {
    await client.send('CreateTable', {
      TableName: tableName,
      KeySchema: keys,
      AttributeDefinitions: keys.map(({ AttributeName }) => ({ AttributeName, AttributeType: KEY_TYPE })),
      BillingMode: 'PAY_PER_REQUEST'
    })
    return true
  } catch (error) {
    if ((error as { name?: string } | undefined)?.name === 'ResourceInUseException') return false
    throw error
  }
}

/** Each way the table's key schema differs from the store's settings, in the settings' names. */
const keyDifferences = (table: TableDescription | undefined, names: AttributeNames): string[] => {
  const key = (type: 'HASH' | 'RANGE'): string | undefined => {
    const name = table?.KeySchema?.find((k) => k.KeyType === type)?.AttributeName
    if (name === undefined) return undefined
    return `${name} (${table?.AttributeDefinitions?.find((a) => a.AttributeName === name)?.AttributeType ?? '?'})`
  }
  const want = (name: string | undefined): string | undefined =>
    name === undefined ? undefined : `${name} (${KEY_TYPE})`
  const out: string[] = []
  const partition = key('HASH')
  if (partition !== want(names.keyAttr)) {
    out.push(`its partition key is ${partition ?? 'none'}, the store's is keyAttr ${want(names.keyAttr) ?? ''}`)
  }
  const sort = key('RANGE')
  if (sort !== want(names.sortKeyAttr)) {
    const storeSort = names.sortKeyAttr === undefined
      ? 'none (sortKeyAttr not set)'
      : `sortKeyAttr ${want(names.sortKeyAttr) ?? ''}`
    out.push(`its sort key is ${sort ?? 'none'}, the store's is ${storeSort}`)
  }
  return out
}

const mismatch = (tableName: string, differences: string[]): IdempotencyConfigError =>
  new IdempotencyConfigError(
    `table ${tableName} exists with another schema than the store's: ${differences.join('; ')}. Nothing was changed`)

/** Resolves once the table is ACTIVE (a new table is CREATING for a few seconds on AWS, none on DynamoDB Local). */
const untilActive = async (
  client: DynamoDBWire,
  tableName: string,
  table: TableDescription | undefined,
  options: CreateTableOptions,
  call: Call
): Promise<void> => {
  const deadline = Date.now() + (options.waitMs ?? 300_000)
  let status = table?.TableStatus
  while (status !== 'ACTIVE') {
    if (status !== 'CREATING' && status !== 'UPDATING') {
      throw new IdempotencyStoreError('read', `table ${tableName} is ${String(status)}, not ACTIVE`)
    }
    if (Date.now() > deadline) {
      throw new IdempotencyStoreError('read',
        `table ${tableName} was still ${status} after ${options.waitMs ?? 300_000} ms`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000))
    status = (await describe(client, tableName, call))?.TableStatus
  }
}
