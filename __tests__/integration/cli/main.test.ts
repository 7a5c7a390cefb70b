import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from '@jest/globals'
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb'
import { createServer } from 'node:net'
import { run } from '../../../src/cli/main.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { endpoint, freshTable } from '../../support/dynamodb.js'
import { keyOf } from '../../support/record-keys.js'

/**
 * The CLI's commands run in this process against DynamoDB Local, for what an operator meets on a
 * table the defaults do not describe (bin.test.ts runs the packed bin for the rest).
 */

const cli = async (...argv: string[]): Promise<{ code: number, out: string, err: string }> => {
  let out = ''
  let err = ''
  const code = await run(argv, { out: (text) => { out += `${text}\n` }, err: (text) => { err += `${text}\n` } })
  return { code, out, err }
}

const savedEnv = { ...process.env }
beforeAll(() => {
  // Region, credentials and the endpoint as the CLI's AWS SDK reads them.
  Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: endpoint(), AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' })
})
afterAll(() => { process.env = { ...savedEnv } })

let table: Awaited<ReturnType<typeof freshTable>>
beforeEach(async () => { table = await freshTable() })
afterEach(async () => { await table.drop() })

const nowS = (): number => Math.floor(Date.now() / 1000)
const R = keyOf('ns', 'r')
const PT = keyOf('ns', 'pt')

test('a table whose store renames expiryAttr: its records are skipped and refused without the flag, read right with it', async () => {
  const renamed = new DynamoDBStore({ tableName: table.tableName, client: table.client, expiryAttr: 'expiration' })
  expect(await renamed.claim({ key: R, status: 'IN_PROGRESS', expiry: nowS() + 3600, inProgressExpiry: Date.now() + 600_000, leaseToken: 't' }, Date.now())).toBeUndefined()

  const plain = await cli('list', '--table', table.tableName)
  expect(plain).toMatchObject({ code: 0, out: 'no records\n' })
  expect(plain.err).toMatch(/1 item that is not a record was skipped/)
  const inspected = await cli('inspect', R, '--table', table.tableName)
  expect(inspected.code).toBe(1)
  expect(inspected.err).toContain(`${R} is not a middy-idempotency record: it has no number attribute 'expiry' (--expiry-attr)`)

  const listed = await cli('list', '--table', table.tableName, '--expiry-attr', 'expiration', '--json')
  expect(listed.code).toBe(0)
  expect(JSON.parse(listed.out)).toEqual([expect.objectContaining({ key: R, expired: false, protecting: true })])
  expect(listed.err).toBe('')
})

test('release refuses a Powertools record with a live lease in a shared table, and leaves it', async () => {
  const item = { idempotencyKey: { S: PT }, status: { S: 'INPROGRESS' }, expiration: { N: String(nowS() + 3600) }, in_progress_expiration: { N: String(Date.now() + 600_000) } }
  await table.client.send(new PutItemCommand({ TableName: table.tableName, Item: item }))
  const released = await cli('release', PT, '--table', table.tableName)
  expect(released.code).toBe(1)
  expect(released.err).toContain(`${PT} is not a middy-idempotency record`)
  expect((await table.client.send(new GetItemCommand({ TableName: table.tableName, Key: { idempotencyKey: { S: PT } }, ConsistentRead: true }))).Item).toEqual(item)
})

test('list --sort-key-attr on a table with no sort key is an error naming the mismatch, not "no records"', async () => {
  const listed = await cli('list', '--table', table.tableName, '--sort-key-attr', 'sk')
  expect(listed.code).toBe(1)
  expect(listed.out).toBe('')
  expect(listed.err).toMatch(/the table has partition key idempotencyKey \(S\) and no sort key.*remove --sort-key-attr/)
})

test('inspect without --sort-key-attr on a table with a sort key names the flag to set', async () => {
  const sorted = await freshTable({ sortKeyAttr: 'sk' })
  try {
    const inspected = await cli('inspect', 'ns#x', '--table', sorted.tableName)
    expect(inspected.code).toBe(1)
    expect(inspected.err).toMatch(/set --sort-key-attr: 'sk'/)
  } finally {
    await sorted.drop()
  }
})

test('--json reports a store that cannot be reached in one shape, Redis or DynamoDB', async () => {
  // A port nothing listens on: one taken and given back.
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => { resolve() }))

  const redis = await cli('list', '--redis', `redis://127.0.0.1:${port}`, '--json')
  process.env.AWS_ENDPOINT_URL_DYNAMODB = `http://127.0.0.1:${port}`
  let dynamodb
  try {
    dynamodb = await cli('list', '--table', table.tableName, '--json')
  } finally {
    process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint()
  }
  for (const result of [redis, dynamodb]) {
    expect(result.code).toBe(1)
    expect(JSON.parse(result.out)).toEqual({ error: { name: 'IdempotencyStoreError', operation: 'read', message: expect.stringMatching(/ECONNREFUSED/) } })
  }
})
