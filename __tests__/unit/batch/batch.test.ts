import { describe, expect, test } from '@jest/globals'
import { Batch } from '../../../src/batch/batch.js'
import { batchFor, handOver, takeBack } from '../../../src/batch/handover.js'
import { closeOnTimeout } from '../../../src/batch/close.js'
import { preparedRecord, settledOf, type RecordState } from '../../../src/batch/record-state.js'
import { IdempotencyConfigError, IdempotencyHeldBackError, MemoryStore } from '../../../src/index.js'
import type { LifecycleConfig } from '../../../src/lifecycle/config.js'
import { sourceOf } from '../../../src/sources/index.js'
import type { BatchSource } from '../../../src/sources/source.js'
import { sqsEvent, sqsRecord } from '../../support/sqs.js'

const source = sourceOf(sqsEvent([sqsRecord('x')])) as BatchSource

/** A batch of one claimed record on a MemoryStore that holds its claim. */
const batchOfOne = async (context: object = {}): Promise<{ batch: Batch, state: RecordState, store: MemoryStore }> => {
  const store = new MemoryStore()
  const silent = (): void => {}
  const config: LifecycleConfig = { store, expiresAfterSeconds: 60, onFailure: 'delete', log: { debug: silent, info: silent, warn: silent, error: silent, writes: () => false }, now: Date.now, clockSkewMs: 0 }
  const record = sqsRecord('a')
  const unit = { key: 'k-a', attempt: 1 }
  const nowMs = Date.now()
  await store.claim({ key: unit.key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + 60, inProgressExpiry: nowMs + 60_000, leaseToken: 't' }, nowMs)
  const limits = { maxStoreRequests: 4, recordConcurrency: 4, timeoutMarginMs: 0 }
  const prepared = [preparedRecord(record, record.messageId, undefined, { unit })]
  const batch = new Batch(source, config, limits, sqsEvent([record]), prepared, { nowMs, until: nowMs + 60_000 }, context)
  const state = batch.records[0] as RecordState
  batch.claimDecided(state, { kind: 'run', leaseToken: 't' })
  batch.hand()
  return { batch, state, store }
}

/** A claimed record's phase. */
const phaseOf = ({ fate }: RecordState): string | undefined => fate.kind === 'claimed' ? fate.phase : undefined

describe('Batch: one object owns the batch\'s stages', () => {
  test('a batch is started once: a second perRecord on it would run its records twice', async () => {
    const { batch } = await batchOfOne()
    const stop = batch.start(new AbortController().signal)
    expect(batch.scheduled).toBe(true)
    expect(() => batch.start(new AbortController().signal)).toThrow(IdempotencyConfigError)
    stop()
  })

  test('Middy\'s abort closes the batch as timed out, and no record starts after it', async () => {
    const { batch } = await batchOfOne()
    const controller = new AbortController()
    const stop = batch.start(controller.signal)
    expect(batch.closed).toBe(false)
    controller.abort()
    expect([batch.closed, batch.timedOut]).toEqual([true, true])
    stop()
  })

  test('closing on an error is not a timeout, and a timeout after it still is', async () => {
    const { batch } = await batchOfOne()
    batch.close(false)
    expect([batch.closed, batch.timedOut]).toEqual([true, false])
    batch.close(true)
    expect(batch.timedOut).toBe(true)
  })

  test('a record skipped behind its group is released at once; one skipped on closing waits for closeOnTimeout', async () => {
    const held = await batchOfOne()
    const answer = await held.batch.skip(held.state, 'held-back')
    expect(answer.reason).toBeInstanceOf(IdempotencyHeldBackError)
    expect([phaseOf(held.state), settledOf(held.state)?.settledAs, held.store.records().length]).toEqual(['settled', 'held-back', 0])

    const closed = await batchOfOne()
    closed.batch.start(new AbortController().signal)
    await closed.batch.skip(closed.state, 'closed')
    expect([phaseOf(closed.state), closed.store.records().length]).toEqual(['not-started', 1])
    await closeOnTimeout(closed.batch)
    expect([settledOf(closed.state)?.settledAs, closed.store.records().length]).toEqual(['held-back', 0])
  })

  test('a record is settled once: a second outcome does not overwrite the first', async () => {
    const { batch, state, store } = await batchOfOne()
    await batch.settle(state, { status: 'fulfilled', value: 1 })
    await batch.settle(state, { status: 'rejected', reason: new Error('late') })
    expect([settledOf(state)?.settledAs, settledOf(state)?.result]).toEqual(['completed', { status: 'fulfilled', value: 1 }])
    expect(store.records()[0]?.status).toBe('COMPLETED')
  })

  test('once answered, the batch stays answered and closes no more', async () => {
    const { batch } = await batchOfOne()
    const response = batch.answer('native') as { batchItemFailures: unknown[] }
    expect(response.batchItemFailures).toHaveLength(1)
    batch.close(true)
    expect([batch.answered, batch.timedOut]).toEqual([true, false])
  })
})

describe('handing a batch to perRecord through the Lambda context', () => {
  test('found by the handed event, or by the context alone when a middleware replaced the event', async () => {
    const context = {}
    const { batch } = await batchOfOne(context)
    const handed = handOver(batch.event, batch)
    expect(batchFor(handed, context)).toBe(batch)
    expect(batchFor({ Records: [] }, context)).toBe(batch)
    expect(JSON.stringify(context)).toBe('{}')
    takeBack(batch)
    expect(batchFor(handed, context)).toBeUndefined()
  })

  test('a context shared by two live batches finds each by its own event only', async () => {
    const context = {}
    const first = await batchOfOne(context)
    const second = await batchOfOne(context)
    const a = handOver(first.batch.event, first.batch)
    const b = handOver(second.batch.event, second.batch)
    expect([batchFor(a, context), batchFor(b, context)]).toEqual([first.batch, second.batch])
    expect(batchFor({ Records: [] }, context)).toBeUndefined()
  })

  test('reading the handed records is noted: a failure before it cannot have run them', async () => {
    const { batch } = await batchOfOne()
    const handed = handOver(batch.event, batch) as { Records: unknown[] }
    expect(batch.recordsRead).toBe(false)
    expect(handed.Records).toHaveLength(1)
    expect(batch.recordsRead).toBe(true)
  })
})
