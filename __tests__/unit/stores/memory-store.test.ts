import { describe, expect, test } from '@jest/globals'
import { MemoryStore } from '../../../src/stores/memory-store.js'
import type { ClaimRecord } from '../../../src/stores/store.js'

const NOW = 1_700_000_000_000
const claimRecord = (token: string, overrides: Partial<ClaimRecord> = {}): ClaimRecord => ({
  key: 'ns#k', status: 'IN_PROGRESS', expiry: NOW / 1000 + 3600, inProgressExpiry: NOW + 30_000, leaseToken: token, payloadHash: 'h', ...overrides
})

describe('MemoryStore', () => {
  test('a claim on a free key is granted; a second one gets the standing record back', async () => {
    const store = new MemoryStore()
    expect(await store.claim(claimRecord('a'), NOW)).toBeUndefined()
    expect(await store.claim(claimRecord('b'), NOW)).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'a' })
  })

  test('a lapsed lease (ms) or an expired record (s) can be claimed again', async () => {
    const store = new MemoryStore()
    await store.claim(claimRecord('a', { inProgressExpiry: NOW + 10 }), NOW)
    expect(await store.claim(claimRecord('b'), NOW + 10)).toBeDefined()
    expect(await store.claim(claimRecord('b'), NOW + 11)).toBeUndefined()
    await store.complete('ns#k', 'b', { expiry: NOW / 1000 + 5, responseData: '1' })
    expect(await store.claim(claimRecord('c'), NOW + 5_999)).toMatchObject({ status: 'COMPLETED' })
    expect(await store.claim(claimRecord('c'), NOW + 6_000)).toBeUndefined()
  })

  test('complete, fail and release are fenced by the lease token', async () => {
    const store = new MemoryStore()
    await store.claim(claimRecord('a', { inProgressExpiry: NOW }), NOW)
    await store.claim(claimRecord('b'), NOW + 1)
    expect(await store.complete('ns#k', 'a', { expiry: 1, responseData: '"stale"' })).toBe(false)
    expect(await store.fail('ns#k', 'a', { expiry: 1, error: { name: 'E', message: 'm' } })).toBe(false)
    expect(await store.release('ns#k', 'a')).toBe(false)
    expect(store.records()).toEqual([expect.objectContaining({ status: 'IN_PROGRESS', leaseToken: 'b' })])
    expect(await store.complete('ns#k', 'b', { expiry: 2 })).toBe(true)
    expect(store.records()[0]).not.toHaveProperty('responseData')
  })

  test('fail keeps the error and drops any response; release deletes', async () => {
    const store = new MemoryStore()
    await store.claim(claimRecord('a'), NOW)
    expect(await store.fail('ns#k', 'a', { expiry: 9, error: { name: 'TypeError', message: 'declined' } })).toBe(true)
    expect((await store.read(['ns#k', 'absent'])).get('ns#k')).toMatchObject({ status: 'FAILED', expiry: 9, error: { name: 'TypeError', message: 'declined' } })
    const other = new MemoryStore()
    await other.claim(claimRecord('z'), NOW)
    expect(await other.release('ns#k', 'z')).toBe(true)
    expect(other.records()).toEqual([])
  })

  test('records handed out are copies', async () => {
    const store = new MemoryStore()
    await store.claim(claimRecord('a'), NOW)
    const [record] = store.records()
    if (record !== undefined) record.status = 'COMPLETED'
    expect(store.records()[0]?.status).toBe('IN_PROGRESS')
  })
})
