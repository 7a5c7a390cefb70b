import { CreateTableCommand, DeleteTableCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb'
import { createIdempotencyTable, localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { DynamoDBStore, type DynamoDBAwsLiteClient, type DynamoDBStoreOptions } from '../../src/dynamodb.js'
import type { IdempotencyStore } from '../../src/index.js'

let tables = 0

export const endpoint = (): string => {
  const value = process.env.DYNAMODB_ENDPOINT
  if (value === undefined) throw new Error('DYNAMODB_ENDPOINT is not set: integration tests need the global setup that starts DynamoDB Local')
  return value
}

export const localClient = (extra: Record<string, unknown> = {}): DynamoDBClient => new DynamoDBClient({ ...localClientConfig(endpoint()), ...extra })

/** A DynamoDB Local client that records the name of every command it sends (`PutItem`, `TransactWriteItems`...). */
export const countingClient = (): { client: DynamoDBClient, sent: string[] } => {
  const client = localClient()
  const sent: string[] = []
  client.middlewareStack.add((next, context) => async (args) => {
    sent.push(String((context as { commandName?: string }).commandName).replace(/Command$/, ''))
    return await next(args)
  }, { step: 'initialize', name: 'countCommands' })
  return { client, sent }
}

/** A fresh table on DynamoDB Local (a new name for every call) and a store on it. */
export const freshTable = async (options: { sortKeyAttr?: string, keyAttr?: string, client?: DynamoDBClient, store?: Partial<DynamoDBStoreOptions> } = {}) => {
  const client = options.client ?? localClient()
  const tableName = `idempotency-${process.pid}-${++tables}-${Math.random().toString(36).slice(2, 8)}`
  await createIdempotencyTable(client, tableName, options)
  const store = new DynamoDBStore({ tableName, client, ...(options.sortKeyAttr === undefined ? {} : { sortKeyAttr: options.sortKeyAttr }), ...(options.keyAttr === undefined ? {} : { keyAttr: options.keyAttr }), ...options.store })
  return {
    client,
    tableName,
    store,
    /** Every item of the table, unmarshalled by hand to plain values. */
    items: async (): Promise<Array<Record<string, unknown>>> => {
      const out = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))
      return (out.Items ?? []).map((item) => Object.fromEntries(Object.entries(item).map(([k, v]) => [k, v.S ?? (v.N === undefined ? v.M : Number(v.N))])))
    },
    /** The statuses of the records under `namespace`, in the table's order. */
    statusesOf: async (namespace: string): Promise<unknown[]> => {
      const out = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))
      return (out.Items ?? []).filter((item) => item.idempotencyKey?.S?.startsWith(`${namespace}#`) === true)
        .map((item) => item.status?.S)
    },
    drop: async () => { await client.send(new DeleteTableCommand({ TableName: tableName })) }
  }
}

/** A namespace of one test's own, so that tests sharing a table never read each other's records. */
export const freshNamespace = (name: string): string => `${name}-${Math.random().toString(36).slice(2, 10)}`

/** One of the user's own tables (a partition key of type S), for `transact` writes: its name and how to drop it. */
export const userTable = async (client: DynamoDBClient, what: string, keyAttr: string): Promise<{ tableName: string, drop: () => Promise<void> }> => {
  const tableName = `${what}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  await client.send(new CreateTableCommand({ TableName: tableName, KeySchema: [{ AttributeName: keyAttr, KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: keyAttr, AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' }))
  return { tableName, drop: async () => { await client.send(new DeleteTableCommand({ TableName: tableName })) } }
}

/**
 * An `@aws-lite/client` for DynamoDB Local, with its DynamoDB plugin (the store uses the raw
 * request call either way). DynamoDB Local takes any region and credentials. `sent` notes the
 * operation of every request (`PutItem`, `BatchExecuteStatement`...).
 */
export const awsLiteClient = async (): Promise<{ client: DynamoDBAwsLiteClient, sent: string[] }> => {
  const { default: awsLite } = await import('@aws-lite/client')
  // The plugin ships no types; a path held in a variable imports as any.
  const plugin = '@aws-lite/dynamodb'
  const plain = await awsLite({
    region: 'us-east-1', accessKeyId: 'local', secretAccessKey: 'local', endpoint: endpoint(), plugins: [import(plugin)], retries: 1
  })
  const sent: string[] = []
  const client = Object.assign(async (request: Parameters<DynamoDBAwsLiteClient>[0]) => {
    sent.push(String(request.headers?.['X-Amz-Target']).replace(/^DynamoDB_20120810\./, ''))
    return await plain(request)
  }, { config: (plain as unknown as { config: object }).config })
  return { client, sent }
}

let companions = 0

/**
 * `store` with each claim, completion, failure and release made beside a companion call of a
 * key no test uses (a claim, or a release of no record), in the same burst: a grouping store
 * sends the two as one BatchExecuteStatement, where alone the call would be its single-item request.
 */
export const groupedCalls = (store: DynamoDBStore): IdempotencyStore => {
  const companionKey = (): string => `companion#${process.pid}-${++companions}`
  const beside = async <T>(call: Promise<T>, companion: Promise<unknown>): Promise<T> => (await Promise.all([call, companion]))[0]
  return {
    limits: store.limits,
    claim: async (record, nowMs, options) => await beside(store.claim(record, nowMs, options), store.claim({ ...record, key: companionKey() }, nowMs)),
    complete: async (key, token, outcome, options) => await beside(store.complete(key, token, outcome, options), store.release(companionKey(), token)),
    fail: async (key, token, outcome, options) => await beside(store.fail(key, token, outcome, options), store.release(companionKey(), token)),
    release: async (key, token, options) => await beside(store.release(key, token, options), store.release(companionKey(), token)),
    read: async (keys, options) => await store.read(keys, options)
  }
}
