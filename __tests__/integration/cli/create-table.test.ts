import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals'
import {
  CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, UpdateTimeToLiveCommand
} from '@aws-sdk/client-dynamodb'
import { randomUUID } from 'node:crypto'
import { run } from '../../../src/cli/main.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { endpoint, localClient } from '../../support/dynamodb.js'
import { keyOf } from '../../support/record-keys.js'

/** `middy-idempotency create-table` against DynamoDB Local, as a newcomer runs it for local work. */

const cli = async (...argv: string[]): Promise<{ code: number, out: string, err: string }> => {
  let out = ''
  let err = ''
  const code = await run(argv, { out: (text) => { out += `${text}\n` }, err: (text) => { err += `${text}\n` } })
  return { code, out, err }
}

const client = localClient()
const made: string[] = []
const savedEnv = { ...process.env }
beforeAll(() => {
  Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: endpoint(), AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' })
})
afterEach(async () => {
  for (const name of made.splice(0)) await client.send(new DeleteTableCommand({ TableName: name })).catch(() => {})
})
afterAll(() => {
  client.destroy()
  process.env = { ...savedEnv }
})

const newName = (): string => {
  const name = `created-${process.pid}-${randomUUID().slice(0, 8)}`
  made.push(name)
  return name
}
const describeTable = async (name: string) => (await client.send(new DescribeTableCommand({ TableName: name }))).Table
const ttlOf = async (name: string) => (await client.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription

/** A table made by hand, as someone's earlier script or console click left it (TTL off). */
const existing = async (name: string, keys: Array<[string, 'HASH' | 'RANGE']>): Promise<void> => {
  await client.send(new CreateTableCommand({
    TableName: name,
    KeySchema: keys.map(([AttributeName, KeyType]) => ({ AttributeName, KeyType })),
    AttributeDefinitions: keys.map(([AttributeName]) => ({ AttributeName, AttributeType: 'S' })),
    BillingMode: 'PAY_PER_REQUEST'
  }))
}

test('creates the store\'s table: idempotencyKey (S), on-demand, ACTIVE, TTL on expiry; the store works on it', async () => {
  const name = newName()
  const result = await cli('create-table', '--table', name)
  expect(result).toEqual({
    code: 0,
    out: `created table ${name}: partition key idempotencyKey (S), no sort key, on-demand (PAY_PER_REQUEST), TTL turned on for expiry; it is ACTIVE\n`,
    err: ''
  })
  const table = await describeTable(name)
  expect(table?.KeySchema).toEqual([{ AttributeName: 'idempotencyKey', KeyType: 'HASH' }])
  expect(table?.AttributeDefinitions).toEqual([{ AttributeName: 'idempotencyKey', AttributeType: 'S' }])
  expect(table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST')
  expect(table?.TableStatus).toBe('ACTIVE')
  expect(await ttlOf(name)).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiry' })
  const store = new DynamoDBStore({ tableName: name, client })
  const nowMs = Date.now()
  expect(await store.claim({ key: keyOf('ns', 'a'), status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + 60, inProgressExpiry: nowMs + 1000, leaseToken: 't' }, nowMs)).toBeUndefined()
})

test('the attribute flags shape it: --key-attr, --sort-key-attr, --expiry-attr; --json is one document', async () => {
  const name = newName()
  const result = await cli('create-table', '--table', name, '--key-attr', 'id', '--sort-key-attr', 'sk', '--expiry-attr', 'expiration', '--json')
  expect(result.code).toBe(0)
  expect(JSON.parse(result.out)).toEqual({ tableName: name, created: true, ttl: 'enabled', partitionKey: 'id', sortKey: 'sk', ttlAttribute: 'expiration' })
  expect((await describeTable(name))?.KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }])
  expect(await ttlOf(name)).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiration' })
})

test('run again: the table is there with the schema, exit 0 saying so', async () => {
  const name = newName()
  expect((await cli('create-table', '--table', name)).code).toBe(0)
  const again = await cli('create-table', '--table', name)
  expect(again).toEqual({
    code: 0,
    out: `table ${name} exists with the store's schema (partition key idempotencyKey (S), no sort key); TTL already on for expiry; it is ACTIVE\n`,
    err: ''
  })
})

test('a table with the schema and TTL off: kept, and TTL turned on', async () => {
  const name = newName()
  await existing(name, [['idempotencyKey', 'HASH']])
  const result = await cli('create-table', '--table', name, '--json')
  expect(result.code).toBe(0)
  expect(JSON.parse(result.out)).toMatchObject({ created: false, ttl: 'enabled' })
  expect(await ttlOf(name)).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiry' })
})

test('a table with another partition key: exit 1 naming the difference in flags, and nothing changed', async () => {
  const name = newName()
  await existing(name, [['id', 'HASH']])
  const result = await cli('create-table', '--table', name)
  expect(result.code).toBe(1)
  expect(result.err).toBe(`middy-idempotency create-table: table ${name} exists with another schema than the store's: ` +
    'its partition key is id (S), the store\'s is --key-attr idempotencyKey (S). Nothing was changed\n')
  expect(await ttlOf(name)).toEqual({ TimeToLiveStatus: 'DISABLED' })
})

test('a table with a sort key the flags do not name, or without the one they name: exit 1 naming it', async () => {
  const sorted = newName()
  await existing(sorted, [['idempotencyKey', 'HASH'], ['sk', 'RANGE']])
  const missing = await cli('create-table', '--table', sorted)
  expect(missing.code).toBe(1)
  expect(missing.err).toContain('its sort key is sk (S), the store\'s is none (--sort-key-attr not set)')
  const plain = newName()
  await existing(plain, [['idempotencyKey', 'HASH']])
  const extra = await cli('create-table', '--table', plain, '--sort-key-attr', 'sk')
  expect(extra.code).toBe(1)
  expect(extra.err).toContain('its sort key is none, the store\'s is --sort-key-attr sk (S)')
})

test('TTL on another attribute: exit 1 naming it (a table has one TTL attribute)', async () => {
  const name = newName()
  await existing(name, [['idempotencyKey', 'HASH']])
  await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }))
  const result = await cli('create-table', '--table', name)
  expect(result.code).toBe(1)
  expect(result.err).toContain('its TTL is on attribute ttl, not on --expiry-attr \'expiry\'')
})

test('create-table is for DynamoDB: --redis is a usage error', async () => {
  const result = await cli('create-table', '--redis', 'redis://127.0.0.1:1')
  expect(result.code).toBe(2)
  expect(result.err).toMatch(/^middy-idempotency create-table: creates a DynamoDB table: --table NAME, not --redis/)
})
