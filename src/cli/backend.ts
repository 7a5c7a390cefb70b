import { IdempotencyConfigError, IdempotencyStoreError } from '../errors.js'
import type { ListOptions, RecordView, ReleaseOptions, ReleaseResult } from '../stores/operator/records.js'
import type { CreateTableResult } from '../stores/dynamodb/create-table.js'

/** The store a command works on, whichever it is: the functions of its entry point, bound to it. */
export interface Backend {
  list: (options: ListOptions) => Promise<RecordView[]>
  inspect: (key: string) => Promise<RecordView | undefined>
  release: (key: string, options: ReleaseOptions) => Promise<ReleaseResult>
  /** DynamoDB only: the store's table, created (or checked) with TTL on. */
  createTable?: () => Promise<CreateTableResult>
  close: () => Promise<void>
}

/** A problem with how the command was called or set up (exit 2). */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

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

export interface StoreFlags { table?: string, redis?: string, prefix?: string, tableOptions?: Partial<Record<TableOption, string>> }

/** `text` with each DynamoDBStore option name it mentions written as its flag (`leaseTokenAttr` → `--lease-token-attr`). */
export const asFlags = (text: string): string =>
  Object.entries(TABLE_FLAGS).reduce((out, [flag, option]) => out.replace(new RegExp(`\\b${option}\\b`, 'g'), `--${flag}`), text)

/**
 * The store the flags name. Each store's module (and its client) is imported only for it: a
 * Redis command never loads the AWS SDK, a DynamoDB command never looks for a Redis client.
 */
export const openBackend = async (flags: StoreFlags): Promise<Backend> => {
  if ((flags.table === undefined) === (flags.redis === undefined)) throw new UsageError('name the store: --table NAME (DynamoDB) or --redis URL (Redis), one of them')
  const tableOptions = flags.tableOptions ?? {}
  if (flags.table !== undefined) {
    if (flags.prefix !== undefined) throw new UsageError('--prefix is for --redis; a DynamoDB table has --key-attr, --sort-key-attr, --sort-key-value and the other --*-attr flags')
    return await dynamodb(flags.table, tableOptions)
  }
  const given = Object.keys(tableOptions)
  if (given.length > 0) throw new UsageError(`${given.map((option) => asFlags(option)).join(', ')} ${given.length === 1 ? 'is' : 'are'} for --table (a Redis record keeps its parts in one value)`)
  return await redis(flags.redis as string, flags.prefix ?? '')
}

const dynamodb = async (tableName: string, tableOptions: Partial<Record<TableOption, string>>): Promise<Backend> => {
  // Region, credentials and AWS_ENDPOINT_URL_DYNAMODB as the SDK reads them.
  const sdk = await importIfInstalled('@aws-sdk/client-dynamodb')
  if (sdk === undefined) {
    throw new UsageError('--table needs the AWS SDK for DynamoDB, and middy-idempotency brings none: ' +
      'install @aws-sdk/client-dynamodb in this project (npm install @aws-sdk/client-dynamodb)')
  }
  const { DynamoDBClient } = sdk as typeof import('@aws-sdk/client-dynamodb')
  const { DynamoDBStore, listRecords, inspectRecord, releaseRecord, createTable } = await import('../dynamodb.js')
  const client = new DynamoDBClient({})
  let store: InstanceType<typeof DynamoDBStore>
  try {
    store = new DynamoDBStore({ tableName, client, ...tableOptions })
  } catch (error) {
    client.destroy()
    // The flags set the store's options: a refusal of them is a usage error, in the flags' names.
    if (error instanceof IdempotencyConfigError) throw new UsageError(asFlags(error.message.replace(/^DynamoDBStore: /, '')))
    throw error
  }
  return {
    list: async (options) => await listRecords(store, options),
    inspect: async (key) => await inspectRecord(store, key),
    release: async (key, options) => await releaseRecord(store, key, options),
    createTable: async () => await createTable(store),
    close: async () => { client.destroy() }
  }
}

/** `import(name)`, or undefined when the package itself is not installed (any other failure is thrown). */
const importIfInstalled = async (name: string): Promise<any> => {
  try {
    return await import(name)
  } catch (error) {
    const { code, message = '' } = (error ?? {}) as { code?: string, message?: string }
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${name}'`)) return undefined
    throw error
  }
}

interface Connected { client: unknown, close: () => Promise<void> }

/** A connected client of whichever of `redis` (node-redis) and `ioredis` is installed, that first. */
const connectRedis = async (url: string): Promise<Connected> => {
  const nodeRedis = await importIfInstalled('redis')
  if (nodeRedis !== undefined) {
    // No reconnecting: an operator wants the error, not a command that waits forever.
    const client = nodeRedis.createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 10_000 } })
    // connect() rejects with the error; the listener keeps a later one from crashing the process.
    client.on('error', () => {})
    await client.connect()
    return { client, close: async () => { await (client.close ?? client.quit).call(client) } }
  }
  const ioredis = await importIfInstalled('ioredis')
  if (ioredis !== undefined) {
    const Redis = ioredis.Redis ?? ioredis.default
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null })
    client.on('error', () => {})
    await client.connect()
    return { client, close: async () => { await client.quit() } }
  }
  throw new UsageError('--redis needs a Redis client, and middy-idempotency brings none: install redis (node-redis) or ioredis in this project (npm install redis)')
}

const redis = async (url: string, keyPrefix: string): Promise<Backend> => {
  try {
    const parsed = new URL(url)
    if (!['redis:', 'rediss:'].includes(parsed.protocol)) throw new Error(parsed.protocol)
  } catch {
    throw new UsageError(`--redis takes a URL such as redis://localhost:6379 or rediss://user:password@host:6380, not ${JSON.stringify(url)}`)
  }
  const { RedisStore, listRecords, inspectRecord, releaseRecord } = await import('../redis.js')
  let connected: Connected
  try {
    connected = await connectRedis(url)
  } catch (error) {
    if (error instanceof UsageError) throw error
    // A store failure, as a DynamoDB one is: the same error, whichever store (the URL without its password).
    const { name = 'Error', message = String(error) } = (error ?? {}) as { name?: string, message?: string }
    const { protocol, host } = new URL(url)
    throw new IdempotencyStoreError('read', `connecting to Redis at ${protocol}//${host} failed: ${name}: ${message}`, { cause: error })
  }
  const store = new RedisStore({ client: connected.client as never, keyPrefix })
  return {
    list: async (options) => await listRecords(store, options),
    inspect: async (key) => await inspectRecord(store, key),
    release: async (key, options) => await releaseRecord(store, key, options),
    close: connected.close
  }
}
