import { afterEach, beforeEach, describe, expect, test } from '@jest/globals'
import {
  makeIdempotent, IdempotencyFailedError, IdempotencyInProgressError, IdempotencyKeyError, IdempotencyPayloadMismatchError,
  type IdempotencyStore, type OutcomeReport
} from '../../../src/index.js'
import type { IdempotencyRecord } from '../../../src/store.js'
import { deferred } from '../deferred.js'
import { lambdaContext } from '../sqs.js'

/** A store for the contract, what it holds under a namespace, and how to put it away. */
export interface IdempotentStore {
  store: IdempotencyStore
  records: (namespace: string) => Promise<IdempotencyRecord[]>
  close?: () => Promise<void>
}

/**
 * What `makeIdempotent(fn, options)` promises, on any store: the same lifecycle as the middleware
 * (claim, complete, fail or release, fenced), around a plain function call.
 */
export const describeMakeIdempotent = (name: string, make: () => Promise<IdempotentStore>): void => {
  describe(`makeIdempotent on ${name}`, () => {
    let target: IdempotentStore
    let namespace: string
    beforeEach(async () => {
      target = await make()
      namespace = `wrap-${Math.random().toString(36).slice(2)}`
    })
    afterEach(async () => { await target.close?.() })

    test('a second call with the same key returns the stored result without running', async () => {
      let runs = 0
      const charge = makeIdempotent(async (order: { id: string, cents: number }) => { runs++; return { charged: order.cents, at: new Date(0) } }, { store: target.store, namespace, key: 'id', logger: false })
      const first = await charge({ id: 'o-1', cents: 500 })
      const second = await charge({ id: 'o-1', cents: 500 })
      expect(runs).toBe(1)
      expect(first).toEqual({ charged: 500, at: new Date(0) })
      // Replayed as JSON gives it back: the Date is its ISO text.
      expect(second).toEqual({ charged: 500, at: '1970-01-01T00:00:00.000Z' })
      const [record] = await target.records(namespace)
      expect(record).toMatchObject({ status: 'COMPLETED', responseData: JSON.stringify(first) })
    })

    test('the default key is the first argument, hashed: other arguments do not count', async () => {
      const seen: unknown[] = []
      const fn = makeIdempotent(async (order: { id: string }, attempt: number) => { seen.push([order.id, attempt]); return attempt }, { store: target.store, namespace, logger: false })
      expect(await fn({ id: 'a' }, 1)).toBe(1)
      expect(await fn({ id: 'a' }, 2)).toBe(1)
      expect(await fn({ id: 'b' }, 3)).toBe(3)
      expect(seen).toEqual([['a', 1], ['b', 3]])
      const keys = (await target.records(namespace)).map((r) => r.key)
      expect(keys).toHaveLength(2)
      for (const key of keys) expect(key).toMatch(new RegExp(`^${namespace}#[0-9a-f]{64}$`))
    })

    test('a key function gets every argument', async () => {
      const fn = makeIdempotent(async (tenant: string, order: { id: string }) => `${tenant}/${order.id}`, {
        store: target.store, namespace, logger: false, key: (tenant, order) => [tenant, order.id], payload: false
      })
      expect(await fn('t1', { id: 'x' })).toBe('t1/x')
      expect(await fn('t2', { id: 'x' })).toBe('t2/x')
      expect(await target.records(namespace)).toHaveLength(2)
    })

    test('a concurrent call rejects with IdempotencyInProgressError and leaves the first call\'s record alone', async () => {
      const started = deferred()
      const finish = deferred<string>()
      const fn = makeIdempotent(async (_order: { id: string }) => { started.resolve(); return await finish.promise }, { store: target.store, namespace, key: 'id', logger: false })
      const first = fn({ id: 'o-2' })
      await started.promise
      await expect(fn({ id: 'o-2' })).rejects.toBeInstanceOf(IdempotencyInProgressError)
      finish.resolve('done')
      expect(await first).toBe('done')
      expect(await target.records(namespace)).toEqual([expect.objectContaining({ status: 'COMPLETED', responseData: '"done"' })])
    })

    test("onFailure 'delete' (the default): the error is thrown, the record released, the next call runs", async () => {
      let runs = 0
      const fn = makeIdempotent(async (_order: { id: string }) => { if (++runs === 1) throw new Error('card declined'); return 'ok' }, { store: target.store, namespace, key: 'id', logger: false })
      await expect(fn({ id: 'o-3' })).rejects.toThrow('card declined')
      expect(await target.records(namespace)).toEqual([])
      expect(await fn({ id: 'o-3' })).toBe('ok')
      expect(runs).toBe(2)
    })

    test("onFailure 'fail': the record is kept FAILED and the next call rejects with IdempotencyFailedError without running", async () => {
      let runs = 0
      const fn = makeIdempotent(async (_order: { id: string }) => { runs++; throw new TypeError('bad card') }, { store: target.store, namespace, key: 'id', onFailure: 'fail', logger: false })
      await expect(fn({ id: 'o-4' })).rejects.toThrow('bad card')
      const again = fn({ id: 'o-4' })
      await expect(again).rejects.toBeInstanceOf(IdempotencyFailedError)
      await expect(again).rejects.toMatchObject({ storedError: { name: 'TypeError', message: 'bad card' } })
      expect(runs).toBe(1)
      expect(await target.records(namespace)).toEqual([expect.objectContaining({ status: 'FAILED', error: { name: 'TypeError', message: 'bad card' } })])
    })

    test('payload validation: the same key with another payload is refused, and the stored record is left alone', async () => {
      const fn = makeIdempotent(async (order: { id: string, cents: number }) => order.cents, { store: target.store, namespace, key: 'id', logger: false })
      await fn({ id: 'o-5', cents: 1 })
      await expect(fn({ id: 'o-5', cents: 2 })).rejects.toBeInstanceOf(IdempotencyPayloadMismatchError)
      expect(await target.records(namespace)).toEqual([expect.objectContaining({ status: 'COMPLETED', responseData: '1' })])
    })

    test('no key: a clear IdempotencyKeyError naming the key path, nothing stored, nothing run', async () => {
      let runs = 0
      const fn = makeIdempotent(async (_order: { id?: string }) => { runs++ }, { store: target.store, namespace, key: 'id', logger: false })
      await expect(fn({})).rejects.toThrow(IdempotencyKeyError)
      await expect(fn({})).rejects.toThrow(/key path "id" found nothing/)
      expect(runs).toBe(0)
      expect(await target.records(namespace)).toEqual([])
    })

    test('the lease ends at the deadline of a Lambda context among the arguments', async () => {
      const nowMs = Date.now()
      const started = deferred()
      const finish = deferred()
      const fn = makeIdempotent(async (_event: { id: string }, _context: unknown) => { started.resolve(); await finish.promise }, { store: target.store, namespace, key: 'id', logger: false, now: () => nowMs })
      const running = fn({ id: 'o-6' }, lambdaContext(12_345))
      await started.promise
      expect(await target.records(namespace)).toEqual([expect.objectContaining({ status: 'IN_PROGRESS', inProgressExpiry: nowMs + 12_345 })])
      finish.resolve()
      await running
    })

    test('without a Lambda context the lease is leaseSeconds', async () => {
      const nowMs = Date.now()
      const started = deferred()
      const finish = deferred()
      const fn = makeIdempotent(async (_order: { id: string }) => { started.resolve(); await finish.promise }, { store: target.store, namespace, key: 'id', leaseSeconds: 42, logger: false, now: () => nowMs })
      const running = fn({ id: 'o-7' })
      await started.promise
      expect(await target.records(namespace)).toEqual([expect.objectContaining({ status: 'IN_PROGRESS', inProgressExpiry: nowMs + 42_000 })])
      finish.resolve()
      await running
    })

    test('called as a method, fn runs with the object as this: obj.charge(order) completes, and a second call replays', async () => {
      let runs = 0
      const account = {
        currency: 'EUR',
        charge: makeIdempotent(async function (this: { currency: string }, order: { id: string, cents: number }) {
          runs++
          return `${order.cents} ${this.currency}`
        }, { store: target.store, namespace, key: 'id', logger: false })
      }
      expect(await account.charge({ id: 'o-9', cents: 500 })).toBe('500 EUR')
      expect(await account.charge({ id: 'o-9', cents: 500 })).toBe('500 EUR')
      expect(runs).toBe(1)
      expect(await target.records(namespace)).toEqual([expect.objectContaining({ status: 'COMPLETED', responseData: '"500 EUR"' })])
    })

    test('onOutcome is told what became of each call', async () => {
      const outcomes: OutcomeReport[] = []
      const fn = makeIdempotent(async (_order: { id: string }) => 1, { store: target.store, namespace, key: 'id', logger: false, onOutcome: (o) => outcomes.push(o) })
      await fn({ id: 'o-8' })
      await fn({ id: 'o-8' })
      expect(outcomes.map((o) => o.kind)).toEqual(['completed', 'replayed'])
    })
  })
}
