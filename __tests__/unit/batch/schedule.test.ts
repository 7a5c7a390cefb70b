import { describe, expect, test } from '@jest/globals'
import { schedule } from '../../../src/batch/schedule.js'
import { deferred, within } from '../../support/deferred.js'

interface Item { id: string, group?: string }
const inGroup = (id: string, group: string): Item => ({ id, group })

/**
 * The hooks `schedule` is given, run by the test: each item's work waits until the test ends it
 * (`succeed`, `fail`, `throwIn`), and what happened is noted in order in `events`.
 */
const hooksRun = () => {
  const events: string[] = []
  const ends = new Map<string, ReturnType<typeof deferred<boolean>>>()
  const frees = new Map<string, () => void>()
  let working = 0
  let mostWorking = 0
  let closed = false
  const waiters: Array<{ until: () => boolean, resolve: () => void }> = []
  const note = (event: string): void => {
    events.push(event)
    for (const waiter of waiters.splice(0)) {
      if (waiter.until()) waiter.resolve()
      else waiters.push(waiter)
    }
  }
  const endOf = (id: string): ReturnType<typeof deferred<boolean>> => {
    const end = ends.get(id)
    if (end === undefined) throw new Error(`${id} has not started`)
    return end
  }
  return {
    events,
    mostWorking: () => mostWorking,
    close: () => { closed = true },
    hooks: {
      run: async (item: Item, free: () => void): Promise<boolean> => {
        const end = deferred<boolean>()
        ends.set(item.id, end)
        let freed = false
        const stopWorking = (): void => { if (!freed) { freed = true; working-- } }
        frees.set(item.id, () => { stopWorking(); free() })
        mostWorking = Math.max(mostWorking, ++working)
        note(`start ${item.id}`)
        try {
          return await end.promise
        } finally {
          // A run that returns still holding its slot gives it back as it returns.
          stopWorking()
        }
      },
      skip: (item: Item, why: 'held-back' | 'closed'): void => { note(`skip ${item.id} ${why}`) },
      closed: () => closed
    },
    /** Ends the work of `id` (its slot freed), then its run, with `succeeded`. */
    end: (id: string, succeeded = true): void => { frees.get(id)?.(); endOf(id).resolve(succeeded) },
    /** Frees the slot of `id` without ending its run: its settlement is still being written. */
    free: (id: string): void => { frees.get(id)?.() },
    /** Ends the run of `id`: after `free`, or still holding its slot. */
    settle: (id: string, succeeded = true): void => { endOf(id).resolve(succeeded) },
    throwIn: (id: string, error: Error): void => { endOf(id).reject(error) },
    /** Resolves once `event` has happened; fails the test with its name if it has not within 5 s. */
    after: async (event: string): Promise<void> => {
      if (events.includes(event)) return
      const happened = new Promise<void>((resolve) => { waiters.push({ until: () => events.includes(event), resolve }) })
      await within(happened, 5_000, `${event} (so far: ${events.join(', ')})`)
    }
  }
}

describe('schedule: which item runs when', () => {
  test('no more than `concurrency` items work at once, and each item runs once', async () => {
    const runs = hooksRun()
    const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }))
    const done = schedule(items, 2, runs.hooks)
    await runs.after('start b')
    expect(runs.events).toEqual(['start a', 'start b'])
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      await runs.after(`start ${id}`)
      runs.end(id)
    }
    await done
    expect(runs.events).toEqual(['start a', 'start b', 'start c', 'start d', 'start e'])
    expect(runs.mostWorking()).toBe(2)
  })

  test('the items of a group run one at a time, in order, whatever slots are free', async () => {
    const runs = hooksRun()
    const done = schedule([{ id: 'a1', group: 'a' }, { id: 'a2', group: 'a' }, { id: 'a3', group: 'a' }], 3, runs.hooks)
    for (const id of ['a1', 'a2', 'a3']) {
      await runs.after(`start ${id}`)
      expect(runs.events.at(-1)).toBe(`start ${id}`)
      runs.end(id)
    }
    await done
    expect(runs.mostWorking()).toBe(1)
  })

  test('an item that did not succeed holds back the rest of its group, which are skipped; others go on', async () => {
    const runs = hooksRun()
    const items = [inGroup('a1', 'a'), inGroup('a2', 'a'), inGroup('a3', 'a'), inGroup('b1', 'b'), inGroup('b2', 'b')]
    const done = schedule(items, 2, runs.hooks)
    await runs.after('start b1')
    runs.end('a1', false)
    runs.end('b1')
    await runs.after('start b2')
    runs.end('b2')
    await done
    const ofGroup = (group: string): string[] => runs.events.filter((e) => e.split(' ')[1]?.startsWith(group))
    expect(ofGroup('a')).toEqual(['start a1', 'skip a2 held-back', 'skip a3 held-back'])
    expect(ofGroup('b')).toEqual(['start b1', 'start b2'])
  })

  test('once closed, no item starts: each one left is skipped as closed', async () => {
    const runs = hooksRun()
    const done = schedule([{ id: 'a' }, { id: 'b' }, { id: 'c', group: 'g' }, { id: 'd', group: 'g' }], 1, runs.hooks)
    await runs.after('start a')
    runs.close()
    runs.end('a')
    await done
    expect(runs.events).toEqual(['start a', 'skip b closed', 'skip c closed', 'skip d closed'])
  })

  test('a freed slot starts the next item while the previous one is still settling; ' +
    'its group-mate waits for the settlement', async () => {
    const runs = hooksRun()
    const items = [{ id: 'a1', group: 'a' }, { id: 'a2', group: 'a' }, { id: 'b1' }, { id: 'c1' }]
    const done = schedule(items, 1, runs.hooks)
    await runs.after('start a1')
    runs.free('a1')
    await runs.after('start b1')
    // The slot is free again, and a1 is still settling: c1 takes it, not a2.
    runs.end('b1')
    await runs.after('start c1')
    runs.settle('a1')
    runs.end('c1')
    await runs.after('start a2')
    runs.end('a2')
    await done
    expect(runs.events).toEqual(['start a1', 'start b1', 'start c1', 'start a2'])
  })

  test('a group whose item settles while holding its slot takes that slot before a group not yet started', async () => {
    const runs = hooksRun()
    const items = [inGroup('a1', 'a'), inGroup('a2', 'a'), inGroup('b1', 'b'), inGroup('c1', 'c')]
    const done = schedule(items, 2, runs.hooks)
    await runs.after('start b1')
    runs.settle('a1')
    await runs.after('start a2')
    runs.end('a2')
    runs.end('b1')
    await runs.after('start c1')
    runs.end('c1')
    await done
    expect(runs.events).toEqual(['start a1', 'start b1', 'start a2', 'start c1'])
  })

  test('a run that throws rejects the schedule with its error, and nothing starts after it', async () => {
    const runs = hooksRun()
    const done = schedule([{ id: 'a' }, { id: 'b' }], 1, runs.hooks)
    await runs.after('start a')
    const broken = new Error('settlement threw')
    runs.throwIn('a', broken)
    await expect(done).rejects.toBe(broken)
    expect(runs.events).toEqual(['start a'])
  })

  test('no items: resolves at once, running nothing', async () => {
    const runs = hooksRun()
    await schedule([], 4, runs.hooks)
    expect(runs.events).toEqual([])
  })
})
