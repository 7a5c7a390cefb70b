import { afterEach, beforeEach, describe, expect, test } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { createClient } from 'redis'
import type { IdempotencyStore } from '../../../../src/index.js'
import type { RecordTable } from '../../../../src/stores/operator/table.js'
import { inspectFrom, releaseFrom } from '../../../../src/stores/operator/records.js'
import { DynamoDBStore, listRecords as listDynamoDB } from '../../../../src/dynamodb.js'
import { RedisStore, listRecords as listRedis } from '../../../../src/redis.js'
import { recordTable as dynamodbTable } from '../../../../src/stores/dynamodb/operator.js'
import { recordTable as redisTable } from '../../../../src/stores/redis/operator.js'
import { freshTable } from '../../../support/dynamodb.js'
import { keyOf } from '../../../support/record-keys.js'
import { redisUrl, uniquePrefix } from '../../../support/redis.js'

const RACED = keyOf('ns', 'raced')
const TAKEN = keyOf('ns', 'taken')
const LIVE = keyOf('ns', 'live')

/** The operator functions' store side, on DynamoDB Local and a real redis-server. */
interface Target { store: IdempotencyStore, table: RecordTable, list: typeof listDynamoDB, close: () => Promise<void> }

const dynamodb = async (): Promise<Target> => {
  const made = await freshTable({ sortKeyAttr: 'sk' })
  return { store: made.store, table: dynamodbTable(made.store), list: listDynamoDB as Target['list'], close: made.drop }
}
const redis = async (): Promise<Target> => {
  const client = await createClient({ url: redisUrl() }).connect()
  const store = new RedisStore({ client, keyPrefix: uniquePrefix('operator') })
  return { store, table: redisTable(store), list: listRedis as unknown as Target['list'], close: async () => { await client.close() } }
}

describe.each([['DynamoDBStore (a table with a sort key)', dynamodb], ['RedisStore', redis]])('operator functions on %s', (_name, make) => {
  let target: Target
  beforeEach(async () => { target = await make() })
  afterEach(async () => { await target.close() })

  const claim = async (key: string, leaseMs: number): Promise<string> => {
    const nowMs = Date.now()
    const token = randomUUID()
    expect(await target.store.claim({ key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + 3600, inProgressExpiry: nowMs + leaseMs, leaseToken: token }, nowMs)).toBeUndefined()
    return token
  }

  test('list reads page by page (pageSize items a page) and finds every record', async () => {
    for (let i = 0; i < 7; i++) await claim(keyOf('ns', String(i)), 60_000)
    const pages: number[] = []
    const views = await target.list(target.store as never, { pageSize: 2, onPage: (read) => pages.push(read) })
    expect(views.map((v) => v.key).sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => keyOf('ns', String(i))).sort())
    expect(pages.length).toBeGreaterThanOrEqual(3)
    expect(pages.at(-1)).toBe(7)
  })

  test('a record of our form under a key we never write (not namespace#<sha256 hex>) is skipped by list and refused by inspect', async () => {
    await claim('ns#plain', 60_000)
    await claim(keyOf('ns', 'shaped'), 60_000)
    const skipped: number[] = []
    const views = await target.list(target.store as never, { onPage: (_read, skippedSoFar) => skipped.push(skippedSoFar) })
    expect(views.map((v) => v.key)).toEqual([keyOf('ns', 'shaped')])
    expect(skipped.at(-1)).toBe(1)
    await expect(inspectFrom(target.table, 'ns#plain')).rejects.toThrow('ns#plain is not a middy-idempotency record: its key is not of the shape namespace#[tenant#]<sha256 in hex>')
    await expect(releaseFrom(target.table, 'ns#plain', { force: true })).rejects.toThrow('ns#plain is not a middy-idempotency record')
    // Still there: a claim of its key is refused by it.
    const nowMs = Date.now()
    expect(await target.store.claim({ key: 'ns#plain', status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + 60, inProgressExpiry: nowMs + 1000, leaseToken: randomUUID() }, nowMs))
      .toMatchObject({ status: 'IN_PROGRESS' })
  })

  test('the conditional delete leaves a record its owner completed after the operator read it', async () => {
    const token = await claim(RACED, -1000)
    // The owner, whose lease lapsed, completes after all (its token still holds).
    expect(await target.store.complete(RACED, token, { expiry: Math.floor(Date.now() / 1000) + 3600, responseData: '1' })).toBe(true)
    expect(await target.table.deleteIf(RACED, { leaseToken: token, status: 'IN_PROGRESS', leaseLapsedBefore: Date.now() })).toBe(false)
    expect(await target.table.get(RACED)).toMatchObject({ status: 'COMPLETED' })
  })

  test('the conditional delete leaves a record claimed again by another invocation', async () => {
    const stale = await claim(TAKEN, -1000)
    const fresh = await claim(TAKEN, 60_000)
    expect(await target.table.deleteIf(TAKEN, { leaseToken: stale, status: 'IN_PROGRESS', leaseLapsedBefore: Date.now() })).toBe(false)
    expect(await target.table.get(TAKEN)).toMatchObject({ status: 'IN_PROGRESS', leaseToken: fresh })
  })

  test('the conditional delete leaves a lease that is live at the time given, and takes one that lapsed', async () => {
    const token = await claim(LIVE, 60_000)
    expect(await target.table.deleteIf(LIVE, { leaseToken: token, status: 'IN_PROGRESS', leaseLapsedBefore: Date.now() })).toBe(false)
    expect(await target.table.get(LIVE)).toMatchObject({ status: 'IN_PROGRESS' })
    expect(await target.table.deleteIf(LIVE, { leaseToken: token, status: 'IN_PROGRESS', leaseLapsedBefore: Date.now() + 120_000 })).toBe(true)
    expect(await target.table.get(LIVE)).toBeUndefined()
  })
})

test('the operator functions refuse what is not their store', async () => {
  expect(() => dynamodbTable({} as DynamoDBStore)).toThrow('the operator functions of middy-idempotency/dynamodb take a DynamoDBStore')
  expect(() => redisTable({} as RedisStore)).toThrow('the operator functions of middy-idempotency/redis take a RedisStore')
})
