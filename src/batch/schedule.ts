import { IdempotencyHeldBackError } from '../errors.js'
/**
 * Runs `items` with at most `concurrency` of them working at once; the items of one ordering
 * group one at a time, in order, and none after the first of its group that failed (`run`
 * resolves false). Items without a group each run on their own. `skip` is told of every item
 * not started: held back behind its group's failure, or the batch closed (`closed()` became true).
 *
 * An item's slot is its work's: `run` calls `free()` the moment the work ends, and the next item
 * starts while `run` goes on to write what became of it (the store's own bound limits those
 * writes). The next item of the same group waits for `run` to resolve, though: a group moves on
 * only once its previous record is settled, so a failed settlement still holds the rest back.
 * Resolves once every item has been run or skipped; rejects with the first `run` that throws.
 */
export const schedule = async <T extends { group?: string }>(items: readonly T[], concurrency: number, hooks: {
  run: (item: T, free: () => void) => Promise<boolean>
  skip: (item: T, why: 'held-back' | 'closed') => Promise<void> | void
  closed: () => boolean
}): Promise<void> => {
  const lanes = lanesOf(items)
  return await new Promise<void>((resolve, reject) => {
    let working = 0
    let unfinished = lanes.length
    let fresh = 0
    // Lanes whose previous item has settled go before lanes not yet started, as a group
    // holding a worker used to: a started group finishes before new ones pile up.
    const resumed: Lane<T>[] = []
    let failure: { error: unknown } | undefined

    const laneDone = (): void => {
      if (--unfinished === 0) resolve()
    }
    const fail = (error: unknown): void => {
      failure ??= { error }
      reject(error)
    }
    const pump = (): void => {
      while (failure === undefined && working < concurrency) {
        const lane = resumed.length > 0 ? resumed.shift() : lanes[fresh++]
        if (lane === undefined) return
        next(lane)
      }
    }
    /** Starts the lane's next item, or skips it and the rest of the lane. */
    const next = (lane: Lane<T>): void => {
      const item = lane.items[lane.at++] as T
      // Checked right before starting, with nothing awaited in between: a record is either
      // started or skipped, never both.
      if (hooks.closed()) {
        skipRest(lane, item, 'closed')
        return
      }
      working++
      let freed = false
      const free = (): void => {
        if (freed) return
        freed = true
        working--
        pump()
      }
      hooks.run(item, free).then((succeeded) => {
        const more = succeeded && lane.at < lane.items.length
        // In line before its slot (if it still held one) is given to anyone.
        if (more) resumed.push(lane)
        if (freed) pump()
        else free()
        if (!succeeded) skipRest(lane, lane.items[lane.at++], 'held-back')
        else if (!more) laneDone()
      }, (error: unknown) => {
        // Failed first, so that the slot it frees starts nothing more.
        fail(error)
        free()
      })
    }
    /** Skips `item` and every item after it in its lane (they need no slot: they do not run), then ends the lane. */
    const skipRest = (lane: Lane<T>, item: T | undefined, why: 'held-back' | 'closed'): void => {
      const skipAll = async (): Promise<void> => {
        // Once closed, closed for good; once held back, so are the rest of the group.
        for (let current = item; current !== undefined; current = lane.items[lane.at++]) await hooks.skip(current, why)
      }
      skipAll().then(laneDone, fail)
    }
    if (lanes.length === 0) resolve()
    else pump()
  })
}

interface Lane<T> { items: T[], at: number }

/** One lane per ordering group (its items in order), one per item without a group. */
const lanesOf = <T extends { group?: string }>(items: readonly T[]): Array<Lane<T>> => {
  const lanes: Array<Lane<T>> = []
  const byGroup = new Map<string, Lane<T>>()
  for (const item of items) {
    if (item.group === undefined) { lanes.push({ items: [item], at: 0 }); continue }
    const lane = byGroup.get(item.group)
    if (lane === undefined) {
      const created = { items: [item], at: 0 }
      byGroup.set(item.group, created)
      lanes.push(created)
    } else lane.items.push(item)
  }
  return lanes
}

/**
 * Runs `task` over `items` with at most `limit` in flight, so a 10,000-record batch
 * neither opens 10,000 sockets nor holds 10,000 pending requests in memory.
 */
export const forEachBounded = async <T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>
): Promise<void> => {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      await task(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

/**
 * At most `limit` tasks at once, the others waiting their turn in the order they came: the
 * store requests a batch makes from several places (each record's settlement, as its work
 * ends) stay within one bound.
 */
export class Bound {
  #free: number
  #waiting: Array<() => void> = []
  #head = 0

  constructor (limit: number) {
    this.#free = limit
  }

  /** Runs `task` once a place is free, telling `started` when it has one; gives the place back when `task` settles. */
  async run<T> (task: () => Promise<T>, started?: () => void): Promise<T> {
    if (this.#free > 0) this.#free--
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    started?.()
    try {
      return await task()
    } finally {
      this.#next()
    }
  }

  /** Hands the place to the first waiting task, or frees it. */
  #next (): void {
    const wake = this.#waiting[this.#head]
    if (wake === undefined) {
      this.#free++
      return
    }
    this.#waiting[this.#head++] = undefined as never
    // A long line is dropped once it has been served, not shifted one by one.
    if (this.#head === this.#waiting.length) {
      this.#waiting = []
      this.#head = 0
    }
    wake()
  }
}

/** Why an item was not started, as a record's error: behind its group's failure, or the batch closed. */
export const heldBackError = (why: 'held-back' | 'closed', options: { key?: string, group?: string } = {}): Error =>
  new IdempotencyHeldBackError(why === 'closed'
    ? 'the invocation timed out before it started'
    : 'an earlier record of its ordering group failed', options)
