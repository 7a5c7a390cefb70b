import { describe, expect, it } from '@jest/globals'
import { IdempotencyInProgressError, IdempotencyKeyError } from '../../../src/errors.js'
import { compileSelector } from '../../../src/keys/selector.js'
import { lifecycleConfig, resolveOptions } from '../../../src/options.js'
import { MemoryStore } from '../../../src/stores/memory-store.js'
import type { OutcomeReport } from '../../../src/types.js'
import { fulfilled, rejected } from '../../../src/lifecycle/outcome.js'
import { wholeEventLifecycle, type Admission, type RunningEvent } from '../../../src/lifecycle/whole-event.js'

/** One lifecycle on a MemoryStore, keyed by `id`, with a clock the test moves and every outcome kept. */
const setUp = (onFailure: 'delete' | 'fail' = 'delete') => {
  let nowMs = 1_000_000
  const outcomes: OutcomeReport[] = []
  const store = new MemoryStore()
  const onOutcome = (outcome: OutcomeReport): void => { outcomes.push(outcome) }
  const resolved = resolveOptions({ store, onFailure, logger: false, now: () => nowMs, onOutcome })
  const key = compileSelector('id', 'key')
  const selection = { namespace: 'test', key, keyName: 'key path "id"', payload: compileSelector('amount', 'payload') }
  const lifecycle = wholeEventLifecycle(lifecycleConfig(resolved), selection, 'event', 1000)
  const lease = () => ({ nowMs, until: nowMs + 60_000 })
  const tick = (ms: number): void => { nowMs += ms }
  return { store, outcomes, lifecycle, lease, tick }
}

/** The status of the record under `key`, or undefined when there is none. */
const statusOf = (store: MemoryStore, key: string): string | undefined =>
  store.records().find((record) => record.key === key)?.status

const running = (admission: Admission): RunningEvent => {
  if (admission.kind !== 'run') throw new Error(`expected to run, got ${admission.kind}`)
  return admission
}

describe('the whole-event lifecycle', () => {
  it('runs a new event, completes it with its result, and replays that result for the same key', async () => {
    const { store, outcomes, lifecycle, lease, tick } = setUp()
    const event = running(await lifecycle.admit({ id: 'a', amount: 5 }, undefined, lease()))
    tick(30)
    expect(await lifecycle.settle(event, fulfilled({ paid: 5 }), () => false)).toEqual({ result: fulfilled({ paid: 5 }), kind: 'completed' })
    expect(event.settled).toBe(true)
    expect(statusOf(store, event.unit.key)).toBe('COMPLETED')
    const replay = await lifecycle.admit({ id: 'a', amount: 5 }, undefined, lease())
    expect(replay).toEqual({ kind: 'replay', key: event.unit.key, response: { paid: 5 } })
    expect(outcomes).toEqual([
      { kind: 'completed', key: event.unit.key, durationMs: 30 },
      { kind: 'replayed', key: event.unit.key, durationMs: 0 }
    ])
  })

  it('refuses an event without a key: rejects with the key error, reported as no-key, claims nothing', async () => {
    const { store, outcomes, lifecycle, lease } = setUp()
    await expect(lifecycle.admit({ amount: 5 }, undefined, lease())).rejects.toThrow(IdempotencyKeyError)
    expect(outcomes).toEqual([{ kind: 'no-key', durationMs: 0, error: expect.any(IdempotencyKeyError) }])
    expect(store.records()).toEqual([])
  })

  it('refuses a second event while the first holds the key, reported as in-progress', async () => {
    const { outcomes, lifecycle, lease } = setUp()
    const first = running(await lifecycle.admit({ id: 'a', amount: 5 }, undefined, lease()))
    const second = lifecycle.admit({ id: 'a', amount: 5 }, undefined, lease())
    await expect(second).rejects.toThrow(IdempotencyInProgressError)
    const error = expect.any(IdempotencyInProgressError)
    expect(outcomes).toEqual([{ kind: 'in-progress', key: first.unit.key, durationMs: 0, error }])
  })

  it('applies onFailure to a failure away from the deadline: deleted, the next event runs', async () => {
    const { store, outcomes, lifecycle, lease } = setUp('delete')
    const event = running(await lifecycle.admit({ id: 'a', amount: 5 }, undefined, lease()))
    const error = new Error('card declined')
    expect(await lifecycle.settle(event, rejected(error), () => false)).toEqual({ result: rejected(error), kind: 'failed', onFailure: 'delete' })
    expect(statusOf(store, event.unit.key)).toBeUndefined()
    expect(outcomes).toEqual([{ kind: 'failed', key: event.unit.key, durationMs: 0, onFailure: 'delete', error }])
    expect((await lifecycle.admit({ id: 'a', amount: 5 }, undefined, lease())).kind).toBe('run')
  })

  it('keeps the lease of a failure at the deadline, asking timedOut only of a failure', async () => {
    const { store, outcomes, lifecycle, lease } = setUp('delete')
    const asked: string[] = []
    const event = running(await lifecycle.admit({ id: 'a', amount: 5 }, undefined, lease()))
    await lifecycle.settle(event, rejected(new Error('cut short')), () => { asked.push('failure'); return true })
    expect(asked).toEqual(['failure'])
    expect(statusOf(store, event.unit.key)).toBe('IN_PROGRESS')
    expect(outcomes.map((o) => o.kind)).toEqual(['timed-out'])

    const other = running(await lifecycle.admit({ id: 'b', amount: 5 }, undefined, lease()))
    await lifecycle.settle(other, fulfilled(1), () => { asked.push('success'); return true })
    expect(asked).toEqual(['failure'])
  })
})
