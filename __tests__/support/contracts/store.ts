import { beforeAll, describe, expect, test } from '@jest/globals'
import fc from 'fast-check'
import type { IdempotencyStore } from '../../../src/index.js'
import type { ClaimRecord } from '../../../src/store.js'
import { FAR_FUTURE_MS, initialModel, storeCommands, type Real, type Scope } from './store-model/commands.js'
import { burst, burstRecords, explainingOrder } from './store-model/concurrent.js'
import type { ModelState } from './store-model/model.js'

/** How hard the contract is tried on one store. */
export interface StoreContractOptions {
  /** Runs of the model (each a random sequence of commands by several owners). [50] */
  modelRuns?: number
  /** Commands in one run. [25] */
  maxCommands?: number
  /** Runs of concurrent claims. [40] */
  burstRuns?: number
  /** Per test, for stores behind a network. [60000] */
  timeoutMs?: number
}

type StoreWithRead = IdempotencyStore & Required<Pick<IdempotencyStore, 'read'>>

let runs = 0
const unique = (what: string): string => `${what}${++runs}-${Math.random().toString(36).slice(2, 8)}`

/**
 * The contract every `IdempotencyStore` keeps (docs/stores.md), as tests: the record's life
 * (claim, complete, fail, release), the fences, the limits it states, and a reference model
 * that random interleavings of every operation by several owners, with time passing and
 * skewed clocks, must agree with step by step — also when claims are sent at once. Run it on
 * your own store with a `makeStore` that gives a store on an empty (or unique) keyspace; it
 * needs the store's `read`, with which it compares the whole stored state after every step.
 *
 * @example
 * ```ts
 * describeStoreContract('MyStore', async () => new MyStore({ client: await connect() }))
 * ```
 */
export const describeStoreContract = (name: string, makeStore: () => IdempotencyStore | Promise<IdempotencyStore>, options: StoreContractOptions = {}): void => {
  const { modelRuns = 50, maxCommands = 25, burstRuns = 40, timeoutMs = 60_000 } = options
  const scope: Scope = { completeOverFailed: true }

  describe(`${name} keeps the IdempotencyStore contract`, () => {
    let store: StoreWithRead
    beforeAll(async () => {
      const made = await makeStore()
      if (typeof made.read !== 'function') throw new Error(`${name}: the contract suite compares stored state through read(), which this store lacks`)
      store = made as StoreWithRead
    }, timeoutMs)

    const now = FAR_FUTURE_MS
    const claimOf = (key: string, token: string, leaseMs = 30_000, expiryS = 3600): ClaimRecord =>
      ({ key, status: 'IN_PROGRESS', expiry: Math.floor(now / 1000) + expiryS, inProgressExpiry: now + leaseMs, leaseToken: token, payloadHash: 'hash' })

    test('a claim writes when nothing protects the key; otherwise it returns the record in the way and writes nothing', async () => {
      const key = unique('claim#')
      expect(await store.claim(claimOf(key, 'first'), now)).toBeUndefined()
      expect(await store.claim(claimOf(key, 'second'), now + 1)).toMatchObject({ key, status: 'IN_PROGRESS', leaseToken: 'first', payloadHash: 'hash' })
      expect((await store.read([key])).get(key)).toMatchObject({ leaseToken: 'first' })
    }, timeoutMs)

    test('a lapsed lease (milliseconds) and an expired record (seconds) can be claimed again; a live lease cannot', async () => {
      const lapsed = unique('lapsed#')
      await store.claim(claimOf(lapsed, 'old', 10), now)
      expect(await store.claim(claimOf(lapsed, 'early'), now + 10)).toMatchObject({ leaseToken: 'old' })
      expect(await store.claim(claimOf(lapsed, 'new'), now + 11)).toBeUndefined()
      const expired = unique('expired#')
      await store.claim(claimOf(expired, 'old', 30_000, 1), now)
      expect(await store.complete(expired, 'old', { expiry: Math.floor(now / 1000) + 1, responseData: '1' })).toBe(true)
      expect(await store.claim(claimOf(expired, 'early'), now + 1999)).toMatchObject({ status: 'COMPLETED' })
      expect(await store.claim(claimOf(expired, 'new'), now + 2000)).toBeUndefined()
    }, timeoutMs)

    test('complete, fail and release are fenced by the lease token: a stale owner neither overwrites nor deletes', async () => {
      const key = unique('fence#')
      await store.claim(claimOf(key, 'stale', 0), now)
      expect(await store.claim(claimOf(key, 'live'), now + 1)).toBeUndefined()
      expect(await store.complete(key, 'stale', { expiry: 1, responseData: '"stale"' })).toBe(false)
      expect(await store.fail(key, 'stale', { expiry: 1, error: { name: 'E', message: 'stale' } })).toBe(false)
      expect(await store.release(key, 'stale')).toBe(false)
      expect((await store.read([key])).get(key)).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'live' })
      expect(await store.complete(key, 'live', { expiry: Math.floor(now / 1000) + 60, responseData: '{"ok":true}' })).toBe(true)
      expect((await store.read([key])).get(key)).toMatchObject({ status: 'COMPLETED', responseData: '{"ok":true}' })
    }, timeoutMs)

    // A durable execution (docs/lambda-modes.md) recognises its own record, whatever it became,
    // by the token: a settled record keeps it, a claim in its way returns it, and its holder may
    // complete it again.
    test('a settled record keeps its lease token: a claim in its way returns it, and its holder may complete it again', async () => {
      const [completed, failed] = [unique('kept-completed#'), unique('kept-failed#')]
      for (const key of [completed, failed]) await store.claim(claimOf(key, 'execution'), now)
      expect(await store.complete(completed, 'execution', { expiry: Math.floor(now / 1000) + 60, responseData: '1' })).toBe(true)
      expect(await store.fail(failed, 'execution', { expiry: Math.floor(now / 1000) + 60, error: { name: 'E', message: 'failed' } })).toBe(true)
      expect(await store.claim(claimOf(completed, 'execution'), now + 1)).toMatchObject({ status: 'COMPLETED', leaseToken: 'execution' })
      expect(await store.claim(claimOf(failed, 'execution'), now + 1)).toMatchObject({ status: 'FAILED', leaseToken: 'execution' })
      expect(await store.complete(completed, 'execution', { expiry: Math.floor(now / 1000) + 60, responseData: '1' })).toBe(true)
      expect((await store.read([completed])).get(completed)).toMatchObject({ status: 'COMPLETED', responseData: '1', leaseToken: 'execution' })
    }, timeoutMs)

    test('a result of no data, a stored error with its code, and a release are kept as written', async () => {
      const [empty, failed, released] = [unique('empty#'), unique('failed#'), unique('released#')]
      for (const key of [empty, failed, released]) await store.claim(claimOf(key, 't'), now)
      expect(await store.complete(empty, 't', { expiry: Math.floor(now / 1000) + 60 })).toBe(true)
      expect(await store.fail(failed, 't', { expiry: Math.floor(now / 1000) + 60, error: { name: 'CardError', message: 'declined', code: 'card_declined' } })).toBe(true)
      expect(await store.release(released, 't')).toBe(true)
      const read = await store.read([empty, failed, released])
      expect(read.get(empty)?.status).toBe('COMPLETED')
      expect(read.get(empty)?.responseData).toBeUndefined()
      expect(read.get(failed)).toMatchObject({ status: 'FAILED', error: { name: 'CardError', message: 'declined', code: 'card_declined' } })
      expect(read.has(released)).toBe(false)
    }, timeoutMs)

    test('the limits it states are positive numbers', () => {
      const { limits } = store
      if (limits === undefined) return
      expect(limits.maxResponseBytes).toBeGreaterThan(0)
      expect(limits.maxReadKeys).toBeGreaterThan(0)
      if (limits.transaction !== undefined) {
        expect(limits.transaction.maxWrites).toBeGreaterThan(0)
        expect(limits.transaction.maxBytes).toBeGreaterThan(0)
      }
    })

    test('agrees with the reference model over random interleavings of every operation', async () => {
      await fc.assert(fc.asyncProperty(fc.commands(storeCommands(scope), { maxCommands, size: 'max' }), fc.integer({ min: 0, max: 999_999 }), async (commands, startOffsetMs) => {
        const prefix = unique('run')
        await fc.asyncModelRun(() => ({ model: initialModel(prefix, FAR_FUTURE_MS + startOffsetMs), real: { store, prefix } satisfies Real }), commands)
      }), { numRuns: modelRuns })
    }, timeoutMs)

    test('claims sent at once are explained by one sequential order', async () => {
      await fc.assert(fc.asyncProperty(fc.commands(storeCommands(scope), { maxCommands: 8 }), burst, fc.integer({ min: 0, max: 999_999 }), async (prelude, claims, startOffsetMs) => {
        const prefix = unique('burst')
        let model!: ModelState
        await fc.asyncModelRun(() => {
          model = initialModel(prefix, FAR_FUTURE_MS + startOffsetMs)
          return { model, real: { store, prefix } }
        }, prelude)
        const sent = burstRecords(model, prefix, claims)
        const answers = await Promise.all(sent.map(async ({ record, nowMs }) => await store.claim(record, nowMs)))
        const order = explainingOrder(model, sent, answers, await store.read(model.keys))
        expect({ answers, explainedBy: order }).toEqual({ answers, explainedBy: expect.any(Array) })
      }), { numRuns: burstRuns })
    }, timeoutMs)
  })
}
