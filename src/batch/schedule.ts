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
