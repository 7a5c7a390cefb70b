import { afterAll, afterEach, describe, expect, jest, test } from '@jest/globals'
import { CreateTableCommand, DeleteTableCommand, ScanCommand, UpdateTimeToLiveCommand, type DynamoDBClient, type ScalarAttributeType } from '@aws-sdk/client-dynamodb'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, IdempotencyStoreError, type OutcomeReport } from '../../../src/index.js'
import { DynamoDBStore, type DynamoDBStoreOptions } from '../../../src/dynamodb.js'
import { countingClient, localClient } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

/**
 * A store whose settings do not match its table (DESIGN §5): refused before the user's function
 * runs, with an error naming the table's key schema and the setting, and no record left
 * IN_PROGRESS. Real tables of the wrong shape on DynamoDB Local.
 */

type Attribute = [name: string, type: ScalarAttributeType]
interface Shape { partition: Attribute, sort?: Attribute, ttl?: string }

const dropAfter: Array<() => Promise<void>> = []
afterAll(async () => { await Promise.all(dropAfter.map(async (drop) => { await drop() })) })

/** A table of the given shape (TTL on `ttl` when given), dropped after the suite. */
const tableOf = async (client: DynamoDBClient, shape: Shape): Promise<string> => {
  const tableName = `mismatch-${process.pid}-${Math.random().toString(36).slice(2, 10)}`
  const attributes = [shape.partition, ...(shape.sort === undefined ? [] : [shape.sort])]
  await client.send(new CreateTableCommand({
    TableName: tableName,
    KeySchema: attributes.map(([name], i) => ({ AttributeName: name, KeyType: i === 0 ? 'HASH' : 'RANGE' })),
    AttributeDefinitions: attributes.map(([name, type]) => ({ AttributeName: name, AttributeType: type })),
    BillingMode: 'PAY_PER_REQUEST'
  }))
  if (shape.ttl !== undefined) await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: shape.ttl, Enabled: true } }))
  dropAfter.push(async () => { await client.send(new DeleteTableCommand({ TableName: tableName })) })
  return tableName
}

/**
 * A client of its own whose DescribeTimeToLive is awaited: the store looks at the TTL beside its
 * first claim, not before it, so a test waits for that look (its answer, then the turn in which
 * the store warns) before it reads the warnings.
 */
const lookedAtTtl = (client: DynamoDBClient = localClient()): { client: DynamoDBClient, looked: Promise<void> } => {
  let done: () => void = () => {}
  const looked = new Promise<void>((resolve) => { done = resolve })
  client.middlewareStack.add((next, context) => async (args) => {
    try {
      return await next(args)
    } finally {
      if ((context as { commandName?: string }).commandName === 'DescribeTimeToLiveCommand') setImmediate(done)
    }
  }, { step: 'initialize', priority: 'high', name: 'awaitDescribeTimeToLive' })
  return { client, looked }
}

/** The README's consumer over `store`: which records ran, why each failed record failed, what the table holds. */
const consumer = (client: DynamoDBClient, tableName: string, store: DynamoDBStore) => {
  const ran: string[] = []
  const reasons = new Map<string, unknown>()
  const onOutcome = ({ id, error }: OutcomeReport): void => { if (id !== undefined && error !== undefined) reasons.set(id, error) }
  const quiet = (): void => {}
  const handler = middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: (reason, record) => { reasons.set(record.messageId, reason) } }))
    .use(idempotency({ store, onOutcome, logger: { warn: quiet, error: quiet } }))
    .handler(async (event) => await Promise.allSettled(event.Records.map(async (record) => { ran.push(record.messageId); return 'charged' })))
  return {
    ran,
    reasons,
    invoke: async (records = [sqsRecord({ amount: 5 })]) => ({ records, response: await handler(sqsEvent(records), lambdaContext()) }),
    items: async () => (await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }))).Items ?? []
  }
}

/** Each mismatch: the table's shape, the store's settings, and what the error must name. */
const mismatches: Array<{ name: string, shape: Shape, settings: Partial<DynamoDBStoreOptions>, names: RegExp[] }> = [
  {
    name: 'sortKeyAttr set on a table without a sort key',
    shape: { partition: ['idempotencyKey', 'S'] },
    settings: { sortKeyAttr: 'sk' },
    names: [/partition key idempotencyKey \(S\) and no sort key/, /sortKeyAttr 'sk'/]
  },
  {
    name: 'a table with a sort key, sortKeyAttr not set',
    shape: { partition: ['idempotencyKey', 'S'], sort: ['sk', 'S'] },
    settings: {},
    names: [/partition key idempotencyKey \(S\) and sort key sk \(S\)/, /sortKeyAttr/]
  },
  {
    name: 'another partition key name',
    shape: { partition: ['pk', 'S'] },
    settings: {},
    // Not "set keyAttr: 'pk'": a table keyed otherwise is most likely a business table, not one to fill with records.
    names: [/partition key pk \(S\)/, /keyAttr 'idempotencyKey'/, /give the idempotency records a table of their own; keyAttr: 'pk' only if this table is meant to be shared with them/]
  },
  {
    name: 'another sort key name',
    shape: { partition: ['pk', 'S'], sort: ['sk', 'S'] },
    settings: { keyAttr: 'pk', sortKeyAttr: 'sortKey' },
    names: [/sort key sk \(S\)/, /sortKeyAttr 'sortKey'/]
  },
  {
    name: 'a partition key of type N',
    shape: { partition: ['idempotencyKey', 'N'] },
    settings: {},
    names: [/partition key idempotencyKey \(N\)/, /keyAttr 'idempotencyKey' \(S\)/]
  },
  {
    name: 'a partition key of type B',
    shape: { partition: ['idempotencyKey', 'B'] },
    settings: {},
    names: [/partition key idempotencyKey \(B\)/, /keyAttr 'idempotencyKey' \(S\)/]
  },
  {
    name: 'a sort key of type N',
    shape: { partition: ['pk', 'S'], sort: ['sk', 'N'] },
    settings: { keyAttr: 'pk', sortKeyAttr: 'sk' },
    names: [/sort key sk \(N\)/, /sortKeyAttr 'sk' \(S\)/]
  }
]

describe('store settings mismatched against real tables', () => {
  const client = localClient()

  test.each(mismatches)('$name: the function never runs, the error names the schema and the setting, nothing is left IN_PROGRESS', async ({ shape, settings, names }) => {
    const tableName = await tableOf(client, { ...shape, ttl: 'expiry' })
    const run = consumer(client, tableName, new DynamoDBStore({ tableName, client, ...settings }))
    // Twice: a redelivery (after the lease, on a warm instance) is refused alike.
    for (let delivery = 0; delivery < 2; delivery++) {
      const { records: [record], response } = await run.invoke()
      expect(failedIds(response)).toEqual([record?.messageId])
      const reason = run.reasons.get(String(record?.messageId)) as Error
      expect(reason).toBeInstanceOf(IdempotencyStoreError)
      expect(reason.message).toContain(`table ${tableName}`)
      for (const name of names) expect(reason.message).toMatch(name)
    }
    expect(run.ran).toEqual([])
    expect(await run.items()).toEqual([])
  })

  test('a matching table with a sort key: the function runs once and completes', async () => {
    const tableName = await tableOf(client, { partition: ['pk', 'S'], sort: ['sk', 'S'], ttl: 'expiry' })
    const run = consumer(client, tableName, new DynamoDBStore({ tableName, client, keyAttr: 'pk', sortKeyAttr: 'sk' }))
    const { records, response } = await run.invoke()
    expect(failedIds(response)).toEqual([])
    expect(run.ran).toEqual(records.map((r) => r.messageId))
    expect((await run.items()).map((item) => item.status?.S)).toEqual(['COMPLETED'])
  })

  test('a role that may not describe the table: the mismatch is still refused, naming the settings and the action to allow', async () => {
    const denied = localClient()
    denied.middlewareStack.add((next, context) => async (args) => {
      if ((context as { commandName?: string }).commandName === 'DescribeTableCommand') {
        throw Object.assign(new Error('User is not authorized to perform: dynamodb:DescribeTable'), { name: 'AccessDeniedException' })
      }
      return await next(args)
    }, { step: 'initialize', name: 'denyDescribeTable' })
    const tableName = await tableOf(client, { partition: ['idempotencyKey', 'S'], ttl: 'expiry' })
    const run = consumer(denied, tableName, new DynamoDBStore({ tableName, client: denied, sortKeyAttr: 'sk' }))
    const { records: [record] } = await run.invoke()
    const reason = run.reasons.get(String(record?.messageId)) as Error
    expect(reason).toBeInstanceOf(IdempotencyStoreError)
    expect(reason.message).toMatch(/key schema of table .* does not match the store's settings, keyAttr 'idempotencyKey' \(S\) and sortKeyAttr 'sk' \(S\)/)
    expect(reason.message).toMatch(/allow dynamodb:DescribeTable/)
    expect(run.ran).toEqual([])
    expect(await run.items()).toEqual([])
  })

  test('the check is one request before the first claim, shared by concurrent claims, and not repeated', async () => {
    const counting = countingClient()
    const tableName = await tableOf(counting.client, { partition: ['pk', 'S'], sort: ['sk', 'S'], ttl: 'expiry' })
    counting.sent.length = 0
    const run = consumer(counting.client, tableName, new DynamoDBStore({ tableName, client: counting.client, keyAttr: 'pk', sortKeyAttr: 'sk' }))
    await Promise.all([run.invoke(), run.invoke()])
    await run.invoke()
    expect(counting.sent.filter((name) => name.startsWith('Describe') || name === 'BatchGetItem').sort()).toEqual(['BatchGetItem', 'DescribeTimeToLive'])
    expect(run.ran).toHaveLength(3)
  })
})

describe('the TTL of the table', () => {
  const client = localClient()
  const warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => {})
  afterEach(() => { warnings.mockClear() })
  afterAll(() => { warnings.mockRestore() })
  const ttlWarnings = (): string[] => warnings.mock.calls.filter(([, options]) => (options as { code?: string } | undefined)?.code === 'MIDDY_IDEMPOTENCY_TTL').map(([message]) => String(message))

  test('TTL disabled: records still protect, and the store warns once that the table grows', async () => {
    const tableName = await tableOf(client, { partition: ['idempotencyKey', 'S'] })
    const own = lookedAtTtl()
    const run = consumer(own.client, tableName, new DynamoDBStore({ tableName, client: own.client }))
    const { records } = await run.invoke()
    await run.invoke(records)
    await run.invoke()
    await own.looked
    expect(run.ran).toHaveLength(2)
    expect(ttlWarnings()).toEqual([expect.stringMatching(new RegExp(`TTL is not enabled on table ${tableName}: .*never deleted.*Enable TTL on attribute 'expiry'`))])
  })

  test('TTL on another attribute: the function runs, nothing of ours is deleted early, and the store warns once naming both attributes', async () => {
    const tableName = await tableOf(client, { partition: ['idempotencyKey', 'S'], ttl: 'inProgressExpiry' })
    const own = lookedAtTtl()
    const run = consumer(own.client, tableName, new DynamoDBStore({ tableName, client: own.client }))
    const { records } = await run.invoke()
    await run.invoke(records)
    await own.looked
    expect(run.ran).toHaveLength(1)
    expect(ttlWarnings()).toEqual([expect.stringMatching(/TTL of table .* is on attribute inProgressExpiry, not on expiryAttr 'expiry'/)])
  })

  test('TTL on expiryAttr: no warning', async () => {
    const tableName = await tableOf(client, { partition: ['idempotencyKey', 'S'], ttl: 'ttl' })
    const own = lookedAtTtl()
    const run = consumer(own.client, tableName, new DynamoDBStore({ tableName, client: own.client, expiryAttr: 'ttl' }))
    await run.invoke()
    await own.looked
    expect(run.ran).toHaveLength(1)
    expect(ttlWarnings()).toEqual([])
  })

  test('a role that may not describe the TTL: the TTL is not looked at, and the store works', async () => {
    const denied = localClient()
    denied.middlewareStack.add((next, context) => async (args) => {
      if ((context as { commandName?: string }).commandName === 'DescribeTimeToLiveCommand') {
        throw Object.assign(new Error('User is not authorized to perform: dynamodb:DescribeTimeToLive'), { name: 'AccessDeniedException' })
      }
      return await next(args)
    }, { step: 'initialize', name: 'denyDescribeTimeToLive' })
    const tableName = await tableOf(client, { partition: ['idempotencyKey', 'S'] })
    const { looked } = lookedAtTtl(denied)
    const run = consumer(denied, tableName, new DynamoDBStore({ tableName, client: denied }))
    const { response } = await run.invoke()
    await looked
    expect(failedIds(response)).toEqual([])
    expect(run.ran).toHaveLength(1)
    expect(ttlWarnings()).toEqual([])
  })
})
