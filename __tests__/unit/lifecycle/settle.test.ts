import { describe, expect, it } from '@jest/globals'
import { IdempotencyHeldBackError, IdempotencyResponseError, IdempotencyTransactError } from '../../../src/errors.js'
import { lifecycleConfig, resolveOptions } from '../../../src/options.js'
import { MemoryStore } from '../../../src/stores/memory-store.js'
import type { CommitResult, FailurePolicy, IdempotencyRecord } from '../../../src/types.js'
import { fulfilled, rejected } from '../../../src/lifecycle/outcome.js'
import { settleUnit, type SettleContext } from '../../../src/lifecycle/settle.js'

const NOW = 1_700_000_000_000
const unit = { key: 'k', attempt: 1 }

/**
 * A MemoryStore that also commits: it answers each commit with `answer` (a refusal DynamoDB gives
 * under a race or a user's condition, which MemoryStore alone cannot be made to give).
 */
class CommittingStore extends MemoryStore {
  constructor (private readonly answer: CommitResult) { super() }
  async commit (): Promise<CommitResult> { return this.answer }
  checkWrite (): string | undefined { return undefined }
}

/** A unit claimed under 'mine' on `store`, and a settle function for it with `onFailure`. */
const claimed = async (store: MemoryStore, onFailure: FailurePolicy = 'delete') => {
  await store.claim({ key: unit.key, status: 'IN_PROGRESS', expiry: NOW / 1000 + 3600, inProgressExpiry: NOW + 30_000, leaseToken: 'mine' }, NOW)
  const config = lifecycleConfig(resolveOptions({ store, onFailure, logger: false, now: () => NOW }))
  const settle = async (outcome: PromiseSettledResult<unknown>, how: Partial<SettleContext> = {}) =>
    await settleUnit(config, unit, { leaseToken: 'mine' }, outcome, { timedOut: false, ...how })
  const record = (): IdempotencyRecord | undefined => store.records().find((r) => r.key === unit.key)
  return { settle, record }
}

describe('settleUnit: what becomes of a claimed unit once its work has ended', () => {
  it('a result is stored COMPLETED and reported fulfilled', async () => {
    const { settle, record } = await claimed(new MemoryStore())
    expect(await settle(fulfilled({ paid: 5 }))).toEqual({ result: fulfilled({ paid: 5 }), kind: 'completed' })
    expect(record()).toMatchObject({ status: 'COMPLETED', responseData: '{"paid":5}' })
  })

  it('a result that cannot be stored is kept FAILED, whatever onFailure says: the work ran', async () => {
    const { settle, record } = await claimed(new MemoryStore(), 'delete')
    const settled = await settle(fulfilled(10n))
    expect(settled).toMatchObject({ kind: 'failed', onFailure: 'fail', result: { status: 'rejected' } })
    expect((settled.result as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyResponseError)
    expect(record()).toMatchObject({ status: 'FAILED', error: { name: 'IdempotencyResponseError' } })
  })

  it("a failure goes through onFailure: 'delete' releases the record, 'fail' keeps it FAILED", async () => {
    const released = await claimed(new MemoryStore(), 'delete')
    expect(await released.settle(rejected(new Error('declined')))).toEqual({ result: rejected(new Error('declined')), kind: 'failed', onFailure: 'delete' })
    expect(released.record()).toBeUndefined()
    const kept = await claimed(new MemoryStore(), 'fail')
    expect(await kept.settle(rejected(new Error('declined')))).toMatchObject({ kind: 'failed', onFailure: 'fail' })
    expect(kept.record()).toMatchObject({ status: 'FAILED', error: { name: 'Error', message: 'declined' } })
  })

  it("an async onFailure function is awaited: its 'fail' keeps the record FAILED", async () => {
    const { settle, record } = await claimed(new MemoryStore(), async () => await Promise.resolve('fail' as const))
    expect(await settle(rejected(new Error('declined')))).toMatchObject({ kind: 'failed', onFailure: 'fail' })
    expect(record()).toMatchObject({ status: 'FAILED' })
  })

  it('an onFailure function that throws or answers neither choice deletes the record', async () => {
    const threw = await claimed(new MemoryStore(), () => { throw new Error('policy bug') })
    expect(await threw.settle(rejected(new Error('declined')))).toMatchObject({ kind: 'failed', onFailure: 'delete' })
    expect(threw.record()).toBeUndefined()
    const odd = await claimed(new MemoryStore(), (() => 'retry') as unknown as FailurePolicy)
    expect(await odd.settle(rejected(new Error('declined')))).toMatchObject({ kind: 'failed', onFailure: 'delete' })
    expect(odd.record()).toBeUndefined()
  })

  it('an unreadable answer (keepFailed) keeps the record FAILED even under onFailure: delete', async () => {
    const { settle, record } = await claimed(new MemoryStore(), 'delete')
    const error = new Error('the answer cannot be read')
    expect(await settle(rejected(error), { keepFailed: true })).toEqual({ result: rejected(error), kind: 'failed', onFailure: 'fail' })
    expect(record()).toMatchObject({ status: 'FAILED', error: { message: 'the answer cannot be read' } })
  })

  it("work never attempted (held back, or not given to perRecord) is released even under onFailure: 'fail'", async () => {
    const heldBack = await claimed(new MemoryStore(), 'fail')
    const error = new IdempotencyHeldBackError('an earlier record of its ordering group failed', { key: unit.key })
    expect(await heldBack.settle(rejected(error))).toEqual({ result: rejected(error), kind: 'held-back' })
    expect(heldBack.record()).toBeUndefined()
    const notGiven = await claimed(new MemoryStore(), 'fail')
    expect(await notGiven.settle(rejected(new Error('dropped')), { attempted: false })).toMatchObject({ kind: 'held-back' })
    expect(notGiven.record()).toBeUndefined()
  })

  it('a failure at the deadline keeps its lease: nothing is written, the lease lapses with the invocation', async () => {
    const { settle, record } = await claimed(new MemoryStore(), 'delete')
    expect(await settle(rejected(new Error('timed out')), { timedOut: true })).toMatchObject({ kind: 'timed-out' })
    expect(record()).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'mine' })
  })

  it('a store fault on the completion keeps the lease and fails the unit with the store error', async () => {
    const store = new MemoryStore()
    const { settle, record } = await claimed(store)
    store.complete = async () => { throw new Error('connection reset') }
    const settled = await settle(fulfilled(1))
    expect(settled.kind).toBe('store-error')
    expect((settled.result as PromiseRejectedResult).reason).toMatchObject({ name: 'IdempotencyStoreError', cause: { message: 'connection reset' } })
    expect(record()).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'mine' })
  })
})

describe('how long a FAILED record protects', () => {
  const YEAR_SECONDS = 366 * 24 * 3600
  it('kept FAILED because its work may have taken effect, it protects for a year, past expiresAfterSeconds', async () => {
    // A stream retries a failed record until it leaves the stream (Kinesis keeps records up to a year): a
    // record that lapsed after expiresAfterSeconds would run its work again at the next retry.
    const unstorable = await claimed(new MemoryStore(), 'delete')
    await unstorable.settle(fulfilled(10n))
    expect(unstorable.record()).toMatchObject({ status: 'FAILED', expiry: NOW / 1000 + YEAR_SECONDS })
    const unreadable = await claimed(new MemoryStore(), 'delete')
    await unreadable.settle(rejected(new Error('unreadable answer')), { keepFailed: true })
    expect(unreadable.record()).toMatchObject({ status: 'FAILED', expiry: NOW / 1000 + YEAR_SECONDS })
  })

  it("kept FAILED by onFailure: 'fail', it protects for expiresAfterSeconds, the window the user chose", async () => {
    const kept = await claimed(new MemoryStore(), 'fail')
    await kept.settle(rejected(new Error('declined')))
    expect(kept.record()).toMatchObject({ status: 'FAILED', expiry: NOW / 1000 + 3600 })
  })
})

describe('settleUnit with transact writes: the commit refused', () => {
  const refused = (reason: 'condition' | 'invalid' | 'temporary'): CommitResult =>
    ({ status: 'refused', entry: 0, code: 'ConditionalCheckFailed', message: 'the balance is too low', reason })

  it("a write refused by its condition: onFailure applies (here 'fail')", async () => {
    const { settle, record } = await claimed(new CommittingStore(refused('condition')), 'fail')
    const settled = await settle(fulfilled(1), { writes: [{ put: 1 }] })
    expect(settled).toMatchObject({ kind: 'failed', onFailure: 'fail' })
    expect((settled.result as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyTransactError)
    expect(record()).toMatchObject({ status: 'FAILED', error: { name: 'IdempotencyTransactError' } })
  })

  it('an invalid write: kept FAILED whatever onFailure says (the work may have had other effects)', async () => {
    const { settle, record } = await claimed(new CommittingStore(refused('invalid')), 'delete')
    expect(await settle(fulfilled(1), { writes: [{ put: 1 }] })).toMatchObject({ kind: 'failed', onFailure: 'fail' })
    expect(record()).toMatchObject({ status: 'FAILED' })
  })

  it('a temporary refusal (a conflicting transaction, throttling): released whatever onFailure says, so a retry may pass', async () => {
    const { settle, record } = await claimed(new CommittingStore(refused('temporary')), 'fail')
    expect(await settle(fulfilled(1), { writes: [{ put: 1 }] })).toMatchObject({ kind: 'failed', onFailure: 'delete' })
    expect(record()).toBeUndefined()
  })
})
