import { describe, expect, test } from '@jest/globals'
import type { IdempotencyRecord } from '../../../../src/store.js'
import { inspectFrom, listFrom, releaseFrom, viewOf } from '../../../../src/stores/operator/records.js'
import type { ExpectedRecord, RecordTable } from '../../../../src/stores/operator/table.js'
import { keyOf } from '../../../support/record-keys.js'

const NOW = 1_800_000_000_000
// Keys of the shape the middleware writes: the operator functions take no other for ours.
const F = keyOf('ns', 'f')
const L = keyOf('ns', 'l')
const C = keyOf('ns', 'c')
const P = keyOf('ns', 'p')

/** A table of one record whose conditional delete answers as told, and notes what it was asked. */
const tableOf = (record: IdempotencyRecord | undefined, deletes: boolean) => {
  const asked: ExpectedRecord[] = []
  const table: RecordTable = {
    where: 'test',
    pages: async function* () { yield { records: record === undefined ? [] : [record], skipped: 0 } },
    get: async () => record,
    deleteIf: async (_key, expected) => { asked.push(expected); return deletes }
  }
  return { table, asked }
}

const failed: IdempotencyRecord = { key: F, status: 'FAILED', expiry: NOW / 1000 + 60, leaseToken: 't1', error: { name: 'E', message: 'm' } }
const lapsed: IdempotencyRecord = { key: L, status: 'IN_PROGRESS', expiry: NOW / 1000 + 60, inProgressExpiry: NOW - 1, leaseToken: 't2' }
const live: IdempotencyRecord = { ...lapsed, inProgressExpiry: NOW + 1 }

test('release deletes a FAILED record on its token and status', async () => {
  const { table, asked } = tableOf(failed, true)
  expect(await releaseFrom(table, F, { now: () => NOW })).toEqual({ released: true, record: viewOf(failed, NOW) })
  expect(asked).toEqual([{ leaseToken: 't1', status: 'FAILED' }])
})

test('release of a lapsed lease also asks that the lease ended before now', async () => {
  const { table, asked } = tableOf(lapsed, true)
  expect((await releaseFrom(table, L, { now: () => NOW })).released).toBe(true)
  expect(asked).toEqual([{ leaseToken: 't2', status: 'IN_PROGRESS', leaseLapsedBefore: NOW }])
})

test('a live lease is refused without asking the store; with force it is deleted on its token only', async () => {
  const refused = tableOf(live, true)
  expect(await releaseFrom(refused.table, L, { now: () => NOW })).toEqual({ released: false, reason: 'live-lease', record: viewOf(live, NOW) })
  expect(refused.asked).toEqual([])
  const forced = tableOf(live, true)
  expect((await releaseFrom(forced.table, L, { now: () => NOW, force: true })).released).toBe(true)
  expect(forced.asked).toEqual([{ leaseToken: 't2', status: 'IN_PROGRESS' }])
})

test('a record that changed before the conditional delete is reported changed, not released', async () => {
  const { table } = tableOf(lapsed, false)
  expect(await releaseFrom(table, L, { now: () => NOW })).toMatchObject({ released: false, reason: 'changed' })
})

test('a COMPLETED record and a missing one are never deleted', async () => {
  const completed = tableOf({ key: C, status: 'COMPLETED', expiry: NOW / 1000 + 60, leaseToken: 't3' }, true)
  expect(await releaseFrom(completed.table, C, { now: () => NOW, force: true })).toMatchObject({ released: false, reason: 'completed' })
  expect(completed.asked).toEqual([])
  expect(await releaseFrom(tableOf(undefined, true).table, 'ns#x')).toEqual({ released: false, reason: 'not-found' })
})

test('a view says whether the record expired, protects its key, and cuts a long result', () => {
  const view = viewOf({ key: 'k', status: 'COMPLETED', expiry: NOW / 1000 - 1, responseData: 'x'.repeat(300) }, NOW, 10)
  expect(view).toMatchObject({ expired: true, protecting: false, result: 'xxxxxxxxxx… (300 characters)' })
})

test.each([
  ['another status', { key: P, status: 'PENDING' as never, expiry: NOW / 1000 + 60 }],
  ['IN_PROGRESS without its lease token', { key: P, status: 'IN_PROGRESS' as const, expiry: NOW / 1000 + 60, inProgressExpiry: NOW - 1 }],
  ['IN_PROGRESS without its lease end', { key: P, status: 'IN_PROGRESS' as const, expiry: NOW / 1000 + 60, leaseToken: 't' }],
  ['an expiry that is not a number', { key: P, status: 'FAILED' as const, expiry: Number.NaN, leaseToken: 't' }]
])('release never asks to delete a record with %s, even forced', async (_what, record: IdempotencyRecord) => {
  const { table, asked } = tableOf(record, true)
  await expect(releaseFrom(table, P, { now: () => NOW, force: true })).rejects.toThrow(`${P} is not a middy-idempotency record`)
  expect(asked).toEqual([])
})

test('completed: a COMPLETED record is deleted on its token and status; any other status is not-completed, unasked', async () => {
  const record: IdempotencyRecord = { key: C, status: 'COMPLETED', expiry: NOW / 1000 + 60, leaseToken: 't3', responseData: '1' }
  const { table, asked } = tableOf(record, true)
  expect(await releaseFrom(table, C, { now: () => NOW, completed: true })).toEqual({ released: true, record: viewOf(record, NOW) })
  expect(asked).toEqual([{ leaseToken: 't3', status: 'COMPLETED' }])
  const other = tableOf(failed, true)
  expect(await releaseFrom(other.table, F, { now: () => NOW, completed: true })).toMatchObject({ released: false, reason: 'not-completed' })
  expect(other.asked).toEqual([])
})

test('leaseToken: a record that is not the one shown (another token) is reported changed, unasked', async () => {
  const { table, asked } = tableOf({ key: C, status: 'COMPLETED', expiry: NOW / 1000 + 60, leaseToken: 'newer' }, true)
  expect(await releaseFrom(table, C, { now: () => NOW, completed: true, leaseToken: 'shown' })).toMatchObject({ released: false, reason: 'changed' })
  expect(asked).toEqual([])
})

describe('a stored date no Date can hold (a record another version or a bug wrote)', () => {
  // An expiry of 9e12 s and a lease end of 9e15 ms are past the last date JavaScript holds (8.64e15 ms).
  const far: IdempotencyRecord = { key: L, status: 'IN_PROGRESS', expiry: 9_007_199_254_740, inProgressExpiry: Number.MAX_SAFE_INTEGER, leaseToken: 'tf' }
  const odd: IdempotencyRecord = { key: F, status: 'FAILED', expiry: Number.NaN, leaseToken: 'tn', error: { name: 'E', message: 'm' } }

  test('is shown as its raw number, beside the stored numbers', () => {
    expect(viewOf(far, NOW)).toMatchObject({
      expiry: 9_007_199_254_740, expiresAt: '9007199254740', expired: false,
      inProgressExpiry: Number.MAX_SAFE_INTEGER, leaseUntil: '9007199254740991', leaseLive: true
    })
    expect(viewOf(odd, NOW).expiresAt).toBe('NaN')
  })

  test('does not stop list for the other records; inspect reads it, and a forced release removes it', async () => {
    const table: RecordTable = {
      where: 'test',
      pages: async function* () { yield { records: [far, odd, failed], skipped: 0 } },
      get: async () => far,
      deleteIf: async () => true
    }
    expect((await listFrom(table, { now: () => NOW })).map((v) => [v.key, v.expiresAt])).toEqual([
      [L, '9007199254740'], [F, 'NaN'], [F, new Date(failed.expiry * 1000).toISOString()]
    ])
    expect(await inspectFrom(table, L, { now: () => NOW })).toMatchObject({ leaseUntil: '9007199254740991' })
    expect(await releaseFrom(table, L, { now: () => NOW, force: true })).toMatchObject({ released: true, record: { leaseUntil: '9007199254740991' } })
  })
})
