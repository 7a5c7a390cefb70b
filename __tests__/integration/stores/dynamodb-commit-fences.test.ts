import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { storedKey } from '../../../src/keys/selector.js'
import { transactions, type DynamoDBStore, type TransactItem } from '../../../src/dynamodb.js'
import type { ClaimRecord } from '../../../src/stores/store.js'
import { freshTable, userTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

/**
 * The fences of a commit (`transact`), each met by the case that only it stops: these tests
 * fail when any one clause of the completion's condition is taken out.
 */
type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
/** The table's store, built with `transactions`: it has `commit`. */
let store: DynamoDBStore & Required<Pick<DynamoDBStore, 'commit'>>
let ledgerTable: Awaited<ReturnType<typeof userTable>>
let ledger: string
beforeAll(async () => {
  table = await freshTable({ store: { transactions } })
  store = table.store as typeof store
  ledgerTable = await userTable(table.client, 'ledger-fences', 'id')
  ledger = ledgerTable.tableName
})
afterAll(async () => {
  await ledgerTable.drop()
  await table.drop()
})

const NOW = Math.floor(Date.now() / 1000) * 1000
const claimOf = (key: string, token: string, leaseMs: number): ClaimRecord => ({
  key, status: 'IN_PROGRESS', expiry: Math.floor(NOW / 1000) + 3600, inProgressExpiry: NOW + leaseMs, leaseToken: token, payloadHash: 'h'
})
const entry = (id: string, by: string): TransactItem => ({ Put: { TableName: ledger, Item: { id, by } } })
const ledgerEntry = async (id: string) => (await table.client.send(new GetItemCommand({ TableName: ledger, Key: { id: { S: id } }, ConsistentRead: true }))).Item?.by?.S
const uid = (): string => Math.random().toString(36).slice(2, 10)

describe('DynamoDBStore.commit fences, on DynamoDB Local', () => {
  test('a stale owner commits while the new owner holds the record IN_PROGRESS: none of its writes apply (lease lost); the live owner commits and its result is stored', async () => {
    const key = `k-stale-${uid()}`
    await table.store.claim(claimOf(key, 'stale', 0), NOW)
    // The stale owner's lease lapsed; the new owner claims and is still working.
    expect(await table.store.claim(claimOf(key, 'live', 30_000), NOW + 1)).toBeUndefined()
    expect(await store.commit(key, 'stale', { expiry: 1, responseData: '"stale"' }, [entry(`${key}-stale`, 'stale')])).toEqual({ status: 'lease-lost' })
    expect(await ledgerEntry(`${key}-stale`)).toBeUndefined()
    expect(await store.commit(key, 'live', { expiry: 9, responseData: '"live"' }, [entry(`${key}-live`, 'live')])).toEqual({ status: 'committed' })
    expect(await ledgerEntry(`${key}-live`)).toBe('live')
    expect((await table.store.read([key])).get(key)).toMatchObject({ status: 'COMPLETED', leaseToken: 'live', responseData: '"live"' })
  })

  test('our own record no longer IN_PROGRESS (kept FAILED with our token): a commit applies nothing', async () => {
    const key = `k-failed-${uid()}`
    await table.store.claim(claimOf(key, 'mine', 30_000), NOW)
    expect(await table.store.fail(key, 'mine', { expiry: Math.floor(NOW / 1000) + 3600, error: { name: 'E', message: 'kept' } })).toBe(true)
    expect(await store.commit(key, 'mine', { expiry: 9, responseData: '"late"' }, [entry(`${key}-late`, 'mine')])).toEqual({ status: 'lease-lost' })
    expect(await ledgerEntry(`${key}-late`)).toBeUndefined()
    expect((await table.store.read([key])).get(key)).toMatchObject({ status: 'FAILED' })
  })

  // Every commit has its own token, as every claim does (it is also the ClientRequestToken).
  test('an unclaimed commit (effects: transact-only) meets a live claim, a lapsed claim and an expired record as the claim would', async () => {
    const live = `k-live-${uid()}`
    await table.store.claim(claimOf(live, 'other', 30_000), NOW)
    const taken = await store.commit(live, `mine-${uid()}`, { expiry: 9, payloadHash: 'h' }, [entry(`${live}-mine`, 'mine')], { nowMs: NOW + 1 })
    expect(taken).toMatchObject({ status: 'taken', record: { status: 'IN_PROGRESS', leaseToken: 'other' } })
    expect(await ledgerEntry(`${live}-mine`)).toBeUndefined()

    const lapsed = `k-lapsed-${uid()}`
    await table.store.claim(claimOf(lapsed, 'other', 0), NOW)
    expect(await store.commit(lapsed, `mine-${uid()}`, { expiry: Math.floor(NOW / 1000) + 3600, payloadHash: 'h' }, [entry(`${lapsed}-mine`, 'mine')], { nowMs: NOW + 1 })).toEqual({ status: 'committed' })
    expect(await ledgerEntry(`${lapsed}-mine`)).toBe('mine')

    const expired = `k-expired-${uid()}`
    // Expired at the commit, an hour on, and still in the table: DynamoDB Local's TTL deletes a
    // record that expired by the machine's clock within seconds, which would make it a new key.
    await table.store.claim({ ...claimOf(expired, 'other', 30_000), expiry: Math.floor(NOW / 1000) + 1800 }, NOW)
    expect(await table.store.complete(expired, 'other', { expiry: Math.floor(NOW / 1000) + 1800 })).toBe(true)
    expect(await store.commit(expired, `mine-${uid()}`, { expiry: Math.floor(NOW / 1000) + 7200, payloadHash: 'h' }, [entry(`${expired}-mine`, 'mine')], { nowMs: NOW + 3_600_000 })).toEqual({ status: 'committed' })

    const completed = `k-completed-${uid()}`
    await table.store.claim(claimOf(completed, 'other', 0), NOW)
    expect(await table.store.complete(completed, 'other', { expiry: Math.floor(NOW / 1000) + 3600, responseData: '1' })).toBe(true)
    expect(await store.commit(completed, `mine-${uid()}`, { expiry: 9, payloadHash: 'h' }, [entry(`${completed}-mine`, 'mine')], { nowMs: NOW + 1 })).toMatchObject({ status: 'taken', record: { status: 'COMPLETED' } })
    expect(await ledgerEntry(`${completed}-mine`)).toBeUndefined()
  })
})

describe("effects: 'transact-only' across hosts whose clocks differ", () => {
  test('with clockSkewMs covering the skew, a host whose clock runs ahead cannot commit over a lease that is still running', async () => {
    const namespace = `skew-${uid()}`
    const record = sqsRecord({ paymentId: uid() })
    // Another invocation claimed the record; its lease runs until NOW + 10 s, real time.
    await table.store.claim(claimOf(storedKey(namespace, record.messageId), 'other', 10_000), NOW)
    // This host's clock runs 1.5 s ahead: it reads NOW + 10.5 s while the real time is NOW + 9 s.
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, effects: 'transact-only', clockSkewMs: 2000, now: () => NOW + 10_500, logger: false }))
      .handler(perRecord(async (_r: unknown, { transact }) => { transact(entry(`${namespace}-effect`, 'ahead')) }))
    const response = await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(sqsEvent([record]), lambdaContext())
    expect(failedIds(response)).toEqual([record.messageId])
    expect(await ledgerEntry(`${namespace}-effect`)).toBeUndefined()
    expect((await table.store.read([storedKey(namespace, record.messageId)])).get(storedKey(namespace, record.messageId))).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'other' })
  })

  test('a redelivery read in bulk: a lease only a clock running ahead sees lapsed is answered in progress from the read, and the work does not run', async () => {
    const namespace = `skew-read-${uid()}`
    const record = sqsRecord({ paymentId: uid() }, { receiveCount: 2 })
    await table.store.claim(claimOf(storedKey(namespace, record.messageId), 'other', 10_000), NOW)
    let ran = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, effects: 'transact-only', clockSkewMs: 2000, now: () => NOW + 10_500, logger: false }))
      .handler(perRecord(async (_r: unknown, { transact }) => { ran++; transact(entry(`${namespace}-effect`, 'ahead')) }))
    const response = await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(sqsEvent([record]), lambdaContext())
    expect(failedIds(response)).toEqual([record.messageId])
    expect(ran).toBe(0)
  })

  test("keeping an unclaimed failure FAILED (onFailure 'fail') does not take over a lease only a clock running ahead sees lapsed", async () => {
    const namespace = `skew-fail-${uid()}`
    const record = sqsRecord({ paymentId: uid() })
    const key = storedKey(namespace, record.messageId)
    await table.store.claim(claimOf(key, 'other', 10_000), NOW)
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, effects: 'transact-only', onFailure: 'fail', clockSkewMs: 2000, now: () => NOW + 10_500, logger: false }))
      .handler(perRecord(async () => { throw new Error('declined') }))
    const response = await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(sqsEvent([record]), lambdaContext())
    expect(failedIds(response)).toEqual([record.messageId])
    expect((await table.store.read([key])).get(key)).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'other' })
  })
})

describe('commits on a table with every attribute renamed and a sort key', () => {
  test('the claimed commit completes the record and the unclaimed one claims it, under the table\'s own names', async () => {
    const renamed = await freshTable({
      keyAttr: 'pk',
      sortKeyAttr: 'sk',
      store: { transactions, sortKeyValue: 'idem', statusAttr: 'st', expiryAttr: 'ttl', inProgressExpiryAttr: 'leaseUntil', leaseTokenAttr: 'fence', payloadHashAttr: 'ph', responseDataAttr: 'out', errorAttr: 'err' }
    })
    try {
      const commit = renamed.store.commit as NonNullable<DynamoDBStore['commit']>
      const claimed = `k-renamed-${uid()}`
      await renamed.store.claim(claimOf(claimed, 'mine', 30_000), NOW)
      expect(await commit(claimed, 'mine', { expiry: Math.floor(NOW / 1000) + 3600, responseData: '"done"' }, [entry(`${claimed}-mine`, 'mine')])).toEqual({ status: 'committed' })
      expect(await ledgerEntry(`${claimed}-mine`)).toBe('mine')

      const unclaimed = `k-renamed-unclaimed-${uid()}`
      expect(await commit(unclaimed, 'first', { expiry: Math.floor(NOW / 1000) + 3600, payloadHash: 'h', responseData: '1' }, [entry(`${unclaimed}-first`, 'first')], { nowMs: NOW })).toEqual({ status: 'committed' })
      expect(await commit(unclaimed, 'second', { expiry: Math.floor(NOW / 1000) + 3600, payloadHash: 'h' }, [entry(`${unclaimed}-second`, 'second')], { nowMs: NOW + 1 }))
        .toMatchObject({ status: 'taken', record: { status: 'COMPLETED', leaseToken: 'first', responseData: '1' } })
      expect(await ledgerEntry(`${unclaimed}-second`)).toBeUndefined()

      expect(await renamed.items()).toEqual(expect.arrayContaining([
        expect.objectContaining({ pk: claimed, sk: 'idem', st: 'COMPLETED', fence: 'mine', out: '"done"' }),
        expect.objectContaining({ pk: unclaimed, sk: 'idem', st: 'COMPLETED', fence: 'first', ph: 'h', out: '1' })
      ]))
    } finally {
      await renamed.drop()
    }
  })
})
