import { afterAll, beforeAll, expect, test } from '@jest/globals'
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { IdempotencyConfig, makeIdempotent as powertoolsMakeIdempotent } from '@aws-lambda-powertools/idempotency'
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb'
import { run } from '../../../src/cli/main.js'
import { makeIdempotent } from '../../../src/index.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { deferred } from '../../support/deferred.js'
import { endpoint, freshTable } from '../../support/dynamodb.js'

/**
 * A table shared with Powertools for AWS Lambda's idempotency utility, as docs/powertools.md sets
 * it up: the store keyed on Powertools' `id`, its expiry in Powertools' `expiration`. Both
 * libraries write their real records; every CLI command sees only ours.
 */

const FLAGS = ['--key-attr', 'id', '--expiry-attr', 'expiration']

const cli = async (...argv: string[]): Promise<{ code: number, out: string, err: string }> => {
  let out = ''
  let err = ''
  const code = await run(argv, { out: (text) => { out += `${text}\n` }, err: (text) => { err += `${text}\n` } })
  return { code, out, err }
}

let table: Awaited<ReturnType<typeof freshTable>>
let theirs: { completed: string, inProgress: string }
let ours: string
const finishTheirs = deferred()
let running: Promise<unknown>
const savedEnv = { ...process.env }

beforeAll(async () => {
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint(), AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local',
    // Powertools prefixes its keys with the function's name, read when its persistence layer is built.
    AWS_LAMBDA_FUNCTION_NAME: 'orders-consumer'
  })
  table = await freshTable({ keyAttr: 'id' })
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName: table.tableName, awsSdkV3Client: table.client as never })
  const started = deferred()
  const charge = powertoolsMakeIdempotent(async (order: { orderId: string, wait?: boolean }) => {
    if (order.wait === true) {
      started.resolve()
      await finishTheirs.promise
    }
    return { charged: order.orderId }
  }, { persistenceStore, config: new IdempotencyConfig({ eventKeyJmesPath: 'orderId' }) })
  await charge({ orderId: 'pt-done' })
  running = charge({ orderId: 'pt-running', wait: true })
  await started.promise
  const store = new DynamoDBStore({ tableName: table.tableName, client: table.client, keyAttr: 'id', expiryAttr: 'expiration' })
  await makeIdempotent(async (order: { orderId: string }) => ({ charged: order.orderId }), { store, namespace: 'orders', key: 'orderId', leaseSeconds: 60, logger: false })({ orderId: 'ours-done' })

  const items = await table.items()
  const keyWith = (status: string): string => String(items.find((i) => i.status === status && !String(i.id).startsWith('orders#'))?.id)
  theirs = { completed: keyWith('COMPLETED'), inProgress: keyWith('INPROGRESS') }
  ours = String(items.find((i) => String(i.id).startsWith('orders#'))?.id)
})
afterAll(async () => {
  finishTheirs.resolve()
  await running
  await table.drop()
  process.env = { ...savedEnv }
})

/** Powertools' records, by their status. */
const THEIRS: Array<[string, 'completed' | 'inProgress']> = [['COMPLETED', 'completed'], ['INPROGRESS', 'inProgress']]

const present = async (key: string): Promise<boolean> =>
  (await table.client.send(new GetItemCommand({ TableName: table.tableName, Key: { id: { S: key } }, ConsistentRead: true }))).Item !== undefined

test('the table holds a real Powertools COMPLETED record, an INPROGRESS one, and one record of ours', () => {
  // Powertools' key, as written: <function name>[.<function>]#<md5 digest in base64> (not hex);
  // ours: namespace#<sha256 in hex>.
  expect(theirs.completed).toMatch(/^orders-consumer[^#]*#[A-Za-z0-9+/]{22}==$/)
  expect(theirs.inProgress).toMatch(/^orders-consumer[^#]*#[A-Za-z0-9+/]{22}==$/)
  expect(ours).toMatch(/^orders#[0-9a-f]{64}$/)
})

test('list shows only our record, and says how many items it skipped', async () => {
  const listed = await cli('list', '--table', table.tableName, ...FLAGS, '--json')
  expect(listed.code).toBe(0)
  expect(JSON.parse(listed.out)).toEqual([expect.objectContaining({ key: ours, status: 'COMPLETED' })])
  expect(listed.err).toMatch(/^middy-idempotency list: 2 items that are not records were skipped/)
})

test.each(THEIRS)('inspect refuses Powertools\' %s record, saying whose it looks like', async (_status, which) => {
  const inspected = await cli('inspect', theirs[which], '--table', table.tableName, ...FLAGS)
  expect(inspected.code).toBe(1)
  expect(inspected.out).toBe('')
  expect(inspected.err).toContain(`${theirs[which]} is not a middy-idempotency record`)
  expect(inspected.err).toMatch(/looks like a record of Powertools for AWS Lambda/)
})

test.each(THEIRS)('release --force refuses Powertools\' %s record and leaves it', async (_status, which) => {
  const released = await cli('release', theirs[which], '--force', '--table', table.tableName, ...FLAGS)
  expect(released.code).toBe(1)
  expect(released.err).toMatch(/is not a middy-idempotency record: .*looks like a record of Powertools for AWS Lambda/)
  expect(await present(theirs[which])).toBe(true)
})

test('our record in the same table is inspected as ours', async () => {
  const inspected = await cli('inspect', ours, '--table', table.tableName, ...FLAGS, '--json')
  expect(inspected.code).toBe(0)
  expect(JSON.parse(inspected.out)).toMatchObject({ key: ours, status: 'COMPLETED', result: '{"charged":"ours-done"}' })
})
