import type { TableDescription } from '@aws-sdk/client-dynamodb'
import type { Item } from './items.js'
import type { AttributeNames } from './types.js'
import type { DynamoDBWire } from './wire.js'

/*
 * Does the table fit the store's settings? A conditional PutItem checks the key itself (a
 * missing key attribute or a key of another type is refused), except for one mismatch: with
 * `sortKeyAttr` set on a table without a sort key, the sort key is stored as a plain attribute,
 * the claim succeeds and only the completion (an UpdateItem by the full key) is refused; the
 * record then stays IN_PROGRESS and the work runs again after every lease. So that setting is
 * checked once before the first claim, by a read of one key (BatchGetItem, which the store needs
 * anyway): DynamoDB refuses a key that does not match the schema.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_GetItem.html#API_GetItem_RequestParameters
 */

/** The key item the check reads: no record has this key (records are `namespace#sha256`). */
const PROBE_KEY = 'middy-idempotency key schema check'

/** The words of DynamoDB's ValidationExceptions that refuse a key for not fitting the key schema. */
const KEY_SCHEMA_REFUSAL = new RegExp([
  'key element does not match the schema',
  'required keys was not given a value',
  'missing the key',
  'type mismatch for key',
  'number of conditions on the keys is invalid'
].join('|'), 'i')

/** True when DynamoDB refused a request because its key does not fit the table's key schema. */
export const isKeySchemaMismatch = (error: unknown): boolean => {
  const { name, message = '' } = (error ?? {}) as { name?: string, message?: string }
  return name === 'ValidationException' && KEY_SCHEMA_REFUSAL.test(message)
}

/**
 * Reads one key shaped by the settings; rejects with DynamoDB's ValidationException when the table's key
 * schema differs.
 */
export const probeKeySchema = async (
  client: DynamoDBWire,
  tableName: string,
  key: (key: string) => Item
): Promise<void> => {
  await client.send('BatchGetItem', { RequestItems: { [tableName]: { Keys: [key(PROBE_KEY)] } } })
}

type KeyAttribute = { name: string, type: string } | undefined

const words = (part: string, attribute: KeyAttribute): string =>
  attribute === undefined ? `no ${part}` : `${part} ${attribute.name} (${attribute.type})`

/** The table's partition and sort key, from DescribeTable. */
const keySchemaOf = (table: TableDescription | undefined): { partition: KeyAttribute, sort: KeyAttribute } => {
  const attribute = (type: 'HASH' | 'RANGE'): KeyAttribute => {
    const name = table?.KeySchema?.find((k) => k.KeyType === type)?.AttributeName
    if (name === undefined) return undefined
    return { name, type: table?.AttributeDefinitions?.find((a) => a.AttributeName === name)?.AttributeType ?? '?' }
  }
  return { partition: attribute('HASH'), sort: attribute('RANGE') }
}

/** What to change, one setting at a time, for the table's key schema. */
const fixes = (names: AttributeNames, partition: KeyAttribute, sort: KeyAttribute): string[] => {
  const out: string[] = []
  // A table keyed on another attribute is most often the application's own table: the records
  // belong in a table of their own, not among its items (where a wrong release could delete a row).
  if (partition !== undefined && partition.name !== names.keyAttr) {
    out.push('give the idempotency records a table of their own; ' +
      `keyAttr: '${partition.name}' only if this table is meant to be shared with them`)
  }
  if (partition !== undefined && partition.type !== 'S') {
    out.push('the partition key must be of type S (the stored keys are strings): use another table')
  }
  if (sort === undefined && names.sortKeyAttr !== undefined) out.push('remove sortKeyAttr (the table has no sort key)')
  if (sort !== undefined && sort.name !== names.sortKeyAttr) out.push(`set sortKeyAttr: '${sort.name}'`)
  if (sort !== undefined && sort.type !== 'S') {
    out.push('the sort key must be of type S (sortKeyValue is a string): use another table')
  }
  return out
}

/**
 * Why the table's key schema does not fit the settings, naming both: the table's schema from
 * DescribeTable, or, when the role may not describe the table, the settings alone.
 */
export const explainKeySchemaMismatch = async (
  client: DynamoDBWire,
  tableName: string,
  names: AttributeNames,
  cause: unknown
): Promise<string> => {
  const settings = `keyAttr '${names.keyAttr}' (S) and ` +
    (names.sortKeyAttr === undefined ? 'sortKeyAttr not set (no sort key)' : `sortKeyAttr '${names.sortKeyAttr}' (S)`)
  const refused = (cause as { message?: string } | undefined)?.message ?? String(cause)
  let how: string
  try {
    const described = await client.send('DescribeTable', { TableName: tableName }) as
      { Table?: TableDescription } | undefined
    const { partition, sort } = keySchemaOf(described?.Table)
    const change = fixes(names, partition, sort)
    how = `: the table has ${words('partition key', partition)} and ${words('sort key', sort)}, ` +
      `the store is set for ${settings}${change.length === 0 ? '' : `: ${change.join('; ')}`}`
  } catch (error) {
    const failedWith = (error as { name?: string } | undefined)?.name ?? 'Error'
    how = `, ${settings} (its schema could not be read to say how: DescribeTable failed with ${failedWith}; ` +
      'allow dynamodb:DescribeTable to see it here)'
  }
  return `the key schema of table ${tableName} does not match the store's settings${how} (${refused})`
}

/**
 * Warns, once, when the table's TTL will not delete the store's records: TTL disabled, or on
 * another attribute than `expiryAttr`. A warning, not a refusal: records still protect exactly
 * as long as they should (expiry is compared on every claim), the table only grows. Nothing of
 * ours is deleted early by TTL on another attribute: TTL only acts on numbers of epoch seconds
 * in the past, and the only other number a record holds is its lease, in epoch milliseconds,
 * which TTL reads as a date tens of thousands of years away.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-before-you-start.html
 * A role without dynamodb:DescribeTimeToLive skips the check.
 */
export const checkTimeToLive = async (
  client: DynamoDBWire,
  tableName: string,
  expiryAttr: string,
  warn: (message: string) => void
): Promise<void> => {
  let ttl: { TimeToLiveStatus?: string, AttributeName?: string } | undefined
  try {
    const described = await client.send('DescribeTimeToLive', { TableName: tableName }) as
      { TimeToLiveDescription?: typeof ttl } | undefined
    ttl = described?.TimeToLiveDescription
  } catch {
    return
  }
  if (ttl?.TimeToLiveStatus === undefined) return
  const on = ttl.TimeToLiveStatus === 'ENABLED' || ttl.TimeToLiveStatus === 'ENABLING'
  if (on && ttl.AttributeName === expiryAttr) return
  const attribute = String(ttl.AttributeName)
  const problem = on
    ? `TTL of table ${tableName} is on attribute ${attribute}, not on expiryAttr '${expiryAttr}'`
    : `TTL is not enabled on table ${tableName}`
  const fix = on
    ? `Set expiryAttr: '${attribute}' if that attribute holds epoch seconds, ` +
      `or use a table with TTL on '${expiryAttr}'.`
    : `Enable TTL on attribute '${expiryAttr}'.`
  warn(`DynamoDBStore: ${problem}: ` +
    'idempotency records are never deleted and the table grows (they still stop protecting at their expiry). ' +
    fix)
}

/**
 * The checks above, once per store, shared by concurrent invocations: the key probe before its
 * first claim, read or commit (the user's function has not run yet), the TTL look beside it. A
 * table that does not fit refuses every later call without a request; a check that failed for
 * another reason (throttling, network) is tried again by the next call.
 */
export interface TableFit {
  /** Resolves once the table is known to fit; rejects with DynamoDB's refusal when it does not. */
  ready: () => Promise<void>
  /**
   * The words for a request refused for the key schema (remembered: the table will not change), or
   * undefined for any other error.
   */
  explain: (error: unknown) => Promise<string | undefined>
}

export const tableFit = (
  client: DynamoDBWire,
  tableName: string,
  names: AttributeNames,
  keyOf: (key: string) => Item
): TableFit => {
  let checked: Promise<void> | undefined
  let ttl: Promise<void> | undefined
  /** Once the table is known not to fit the settings: DynamoDB's refusal and the words for it. */
  let mismatch: { cause: unknown, why: Promise<string> } | undefined
  const check = async (): Promise<void> => {
    // The TTL look only warns, so the first claim does not wait for it: a cold start pays no
    // round trip for it (the key probe, which decides, runs only when sortKeyAttr is set).
    ttl ??= checkTimeToLive(client, tableName, names.expiryAttr, (message) => {
      process.emitWarning(message, { code: 'MIDDY_IDEMPOTENCY_TTL' })
    })
    if (names.sortKeyAttr !== undefined) await probeKeySchema(client, tableName, keyOf)
  }
  return {
    ready: async () => {
      checked ??= check()
      try {
        await checked
      } catch (error) {
        if (!isKeySchemaMismatch(error)) checked = undefined
        throw error
      }
      if (mismatch !== undefined) throw mismatch.cause
    },
    explain: async (error) => {
      if (!isKeySchemaMismatch(error)) return undefined
      mismatch ??= { cause: error, why: explainKeySchemaMismatch(client, tableName, names, error) }
      return await mismatch.why
    }
  }
}
