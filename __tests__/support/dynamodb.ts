import { CreateTableCommand, DeleteTableCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb'
import { createIdempotencyTable, localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { DynamoDBStore, type DynamoDBStoreOptions } from '../../src/dynamodb.js'

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
    drop: async () => { await client.send(new DeleteTableCommand({ TableName: tableName })) }
  }
}

/** One of the user's own tables (a partition key of type S), for `transact` writes: its name and how to drop it. */
export const userTable = async (client: DynamoDBClient, what: string, keyAttr: string): Promise<{ tableName: string, drop: () => Promise<void> }> => {
  const tableName = `${what}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  await client.send(new CreateTableCommand({ TableName: tableName, KeySchema: [{ AttributeName: keyAttr, KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: keyAttr, AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' }))
  return { tableName, drop: async () => { await client.send(new DeleteTableCommand({ TableName: tableName })) } }
}
