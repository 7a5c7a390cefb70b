import { IdempotencyConfigError, IdempotencyStoreError } from '../errors.js'
import type { ListOptions, RecordView, ReleaseOptions, ReleaseResult } from '../stores/operator/records.js'
import type { CreateTableResult } from '../stores/dynamodb/create-table.js'
import { answeredWithin, DEFAULT_TIMEOUT_SECONDS } from './deadline.js'
import { connectRedis, importIfInstalled, type Connected } from './redis-client.js'
import { UsageError } from './usage-error.js'

export { UsageError }

/** The store a command works on, whichever it is: the functions of its entry point, bound to it. */
export interface Backend {
  list: (options: ListOptions) => Promise<RecordView[]>
  inspect: (key: string) => Promise<RecordView | undefined>
  release: (key: string, options: ReleaseOptions) => Promise<ReleaseResult>
  /** DynamoDB only: the store's table, created (or checked) with TTL on. */
  createTable?: () => Promise<CreateTableResult>
  close: () => Promise<void>
}

/** A backend before its time limit: where it is (for messages), and how to drop its client at once. */
interface Opened extends Backend { where: string, destroy: () => void }

/** Each DynamoDBStore option that names where a record keeps its parts, as the flag that sets it. */
export const TABLE_FLAGS = {
  'key-attr': 'keyAttr',
  'sort-key-attr': 'sortKeyAttr',
  'sort-key-value': 'sortKeyValue',
  'status-attr': 'statusAttr',
  'expiry-attr': 'expiryAttr',
  'in-progress-expiry-attr': 'inProgressExpiryAttr',
  'lease-token-attr': 'leaseTokenAttr',
  'payload-hash-attr': 'payloadHashAttr',
  'response-data-attr': 'responseDataAttr',
  'error-attr': 'errorAttr'
} as const

type TableOption = typeof TABLE_FLAGS[keyof typeof TABLE_FLAGS]

/** `timeoutMs`: how long a command waits for an answer of the store (connecting, each page, each record) [10 s]. */
export interface StoreFlags {
  table?: string
  redis?: string
  prefix?: string
  tableOptions?: Partial<Record<TableOption, string>>
  timeoutMs?: number
}

/**
 * `text` with each DynamoDBStore option name it mentions written as its flag (`leaseTokenAttr` →
 * `--lease-token-attr`).
 */
export const asFlags = (text: string): string => Object.entries(TABLE_FLAGS)
  .reduce((out, [flag, option]) => out.replace(new RegExp(`\\b${option}\\b`, 'g'), `--${flag}`), text)

/**
 * The store the flags name. Each store's module (and its client) is imported only for it: a
 * Redis command never loads the AWS SDK, a DynamoDB command never looks for a Redis client.
 */
export const openBackend = async (flags: StoreFlags): Promise<Backend> => {
  if ((flags.table === undefined) === (flags.redis === undefined)) {
    throw new UsageError('name the store: --table NAME (DynamoDB) or --redis URL (Redis), one of them')
  }
  const tableOptions = flags.tableOptions ?? {}
  if (flags.table !== undefined) {
    if (flags.prefix !== undefined) {
      throw new UsageError('--prefix is for --redis; a DynamoDB table has --key-attr, --sort-key-attr, ' +
        '--sort-key-value and the other --*-attr flags')
    }
    return limited(await dynamodb(flags.table, tableOptions), timeoutMsOf(flags))
  }
  const given = Object.keys(tableOptions)
  if (given.length > 0) {
    const named = given.map((option) => asFlags(option)).join(', ')
    throw new UsageError(
      `${named} ${given.length === 1 ? 'is' : 'are'} for --table (a Redis record keeps its parts in one value)`)
  }
  return limited(await redis(flags.redis as string, flags.prefix ?? '', timeoutMsOf(flags)), timeoutMsOf(flags))
}

const timeoutMsOf = (flags: StoreFlags): number => flags.timeoutMs ?? DEFAULT_TIMEOUT_SECONDS * 1000

/**
 * `opened` with a limit on how long each call waits for the store: a listing as long as pages
 * keep coming. Once one gave up, its client is destroyed, and closing it does not wait.
 */
const limited = (opened: Opened, ms: number): Backend => {
  let abandoned = false
  const abandon = (): void => {
    abandoned = true
    opened.destroy()
  }
  const within = async <T>(operation: 'read' | 'release', work: (alive: () => void) => Promise<T>): Promise<T> =>
    await answeredWithin(ms, { operation, where: opened.where }, abandon, work)
  return {
    list: async (options) => await within('read', async (alive) => await opened.list({
      ...options,
      onPage: (read, skipped) => {
        alive()
        options.onPage?.(read, skipped)
      }
    })),
    inspect: async (key) => await within('read', async () => await opened.inspect(key)),
    release: async (key, options) => await within('release', async () => await opened.release(key, options)),
    // Not limited: a new table may take longer than the limit to become ACTIVE, while each look answers.
    ...(opened.createTable === undefined ? {} : { createTable: opened.createTable }),
    close: async () => { if (!abandoned) await opened.close() }
  }
}

const dynamodb = async (tableName: string, tableOptions: Partial<Record<TableOption, string>>): Promise<Opened> => {
  const client = await dynamoDBClient()
  const { DynamoDBStore, listRecords, inspectRecord, releaseRecord, createTable } = await import('../dynamodb.js')
  let store: InstanceType<typeof DynamoDBStore>
  try {
    store = new DynamoDBStore({ tableName, client: client.client as never, ...tableOptions })
  } catch (error) {
    client.destroy()
    // The flags set the store's options: a refusal of them is a usage error, in the flags' names.
    if (error instanceof IdempotencyConfigError) {
      throw new UsageError(asFlags(error.message.replace(/^DynamoDBStore: /, '')))
    }
    throw error
  }
  return {
    where: `DynamoDB (table ${tableName})`,
    list: async (options) => await listRecords(store, options),
    inspect: async (key) => await inspectRecord(store, key),
    release: async (key, options) => await releaseRecord(store, key, options),
    createTable: async () => await createTable(store),
    close: async () => { client.destroy() },
    destroy: () => { client.destroy() }
  }
}

/**
 * A DynamoDB client of whichever is installed: the AWS SDK, else `@aws-lite/client`. Region,
 * credentials and `AWS_ENDPOINT_URL_DYNAMODB` are read from the environment, as the SDK reads them.
 */
const dynamoDBClient = async (): Promise<{ client: unknown, destroy: () => void }> => {
  const sdk = await importIfInstalled('@aws-sdk/client-dynamodb') as
    typeof import('@aws-sdk/client-dynamodb') | undefined
  if (sdk !== undefined) {
    const client = new sdk.DynamoDBClient({})
    return { client, destroy: () => { client.destroy() } }
  }
  const lite = await importIfInstalled('@aws-lite/client')
  if (lite === undefined) {
    throw new UsageError('--table needs the AWS SDK for DynamoDB or @aws-lite/client, ' +
      'and middy-idempotency brings neither: ' +
      'install @aws-sdk/client-dynamodb in this project (npm install @aws-sdk/client-dynamodb)')
  }
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? process.env.AWS_ENDPOINT_URL
  // aws-lite keeps no sockets open between requests: nothing to destroy.
  return { client: await lite.default(endpoint === undefined ? {} : { endpoint }), destroy: () => {} }
}

const redis = async (url: string, keyPrefix: string, timeoutMs: number): Promise<Opened> => {
  try {
    const parsed = new URL(url)
    if (!['redis:', 'rediss:'].includes(parsed.protocol)) throw new Error(parsed.protocol)
  } catch {
    throw new UsageError('--redis takes a URL such as redis://localhost:6379 or rediss://user:password@host:6380, ' +
      `not ${JSON.stringify(url)}`)
  }
  const { RedisStore, listRecords, inspectRecord, releaseRecord } = await import('../redis.js')
  const { protocol, host } = new URL(url)
  // The URL without its password, in messages.
  const where = `Redis at ${protocol}//${host}`
  let connected: Connected
  const opened: Array<() => void> = []
  try {
    const abandon = (): void => { for (const destroy of opened) destroy() }
    connected = await answeredWithin(timeoutMs, { operation: 'read', where }, abandon,
      async () => await connectRedis(url, timeoutMs, (destroy) => { opened.push(destroy) }))
  } catch (error) {
    if (error instanceof UsageError || error instanceof IdempotencyStoreError) throw error
    // A store failure, as a DynamoDB one is: the same error, whichever store (the URL without its password).
    const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
    for (const destroy of opened) destroy()
    throw new IdempotencyStoreError('read', `connecting to ${where} failed: ${name}: ${message}`, { cause: error })
  }
  const store = new RedisStore({ client: connected.client as never, keyPrefix })
  return {
    list: async (options) => await listRecords(store, options),
    inspect: async (key) => await inspectRecord(store, key),
    release: async (key, options) => await releaseRecord(store, key, options),
    where,
    close: connected.close,
    destroy: connected.destroy
  }
}
