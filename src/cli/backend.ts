import type { ListOptions, RecordView, ReleaseResult } from '../operator/records.js'

/** The store a command works on, whichever it is: the functions of its entry point, bound to it. */
export interface Backend {
  list: (options: ListOptions) => Promise<RecordView[]>
  inspect: (key: string) => Promise<RecordView | undefined>
  release: (key: string, force: boolean) => Promise<ReleaseResult>
  close: () => Promise<void>
}

/** A problem with how the command was called or set up (exit 2). */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export interface StoreFlags { table?: string, redis?: string, prefix?: string, keyAttr?: string, sortKeyAttr?: string, sortKeyValue?: string }

/**
 * The store the flags name. Each store's module (and its client) is imported only for it: a
 * Redis command never loads the AWS SDK, a DynamoDB command never looks for a Redis client.
 */
export const openBackend = async (flags: StoreFlags): Promise<Backend> => {
  if ((flags.table === undefined) === (flags.redis === undefined)) throw new UsageError('name the store: --table NAME (DynamoDB) or --redis URL (Redis), one of them')
  if (flags.table !== undefined) {
    if (flags.prefix !== undefined) throw new UsageError('--prefix is for --redis; a DynamoDB table has --key-attr, --sort-key-attr and --sort-key-value')
    return await dynamodb(flags.table, flags)
  }
  if (flags.keyAttr !== undefined || flags.sortKeyAttr !== undefined || flags.sortKeyValue !== undefined) throw new UsageError('--key-attr, --sort-key-attr and --sort-key-value are for --table')
  return await redis(flags.redis as string, flags.prefix ?? '')
}

const dynamodb = async (tableName: string, flags: StoreFlags): Promise<Backend> => {
  // Region, credentials and AWS_ENDPOINT_URL_DYNAMODB as the SDK reads them.
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb')
  const { DynamoDBStore, listRecords, inspectRecord, releaseRecord } = await import('../dynamodb.js')
  const client = new DynamoDBClient({})
  const store = new DynamoDBStore({
    tableName, client,
    ...(flags.keyAttr === undefined ? {} : { keyAttr: flags.keyAttr }),
    ...(flags.sortKeyAttr === undefined ? {} : { sortKeyAttr: flags.sortKeyAttr }),
    ...(flags.sortKeyValue === undefined ? {} : { sortKeyValue: flags.sortKeyValue })
  })
  return {
    list: async (options) => await listRecords(store, options),
    inspect: async (key) => await inspectRecord(store, key),
    release: async (key, force) => await releaseRecord(store, key, { force }),
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
  const connected = await connectRedis(url)
  const store = new RedisStore({ client: connected.client as never, keyPrefix })
  return {
    list: async (options) => await listRecords(store, options),
    inspect: async (key) => await inspectRecord(store, key),
    release: async (key, force) => await releaseRecord(store, key, { force }),
    close: connected.close
  }
}
