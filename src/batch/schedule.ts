import { forEachBounded } from '../bounded.js'

/**
 * Runs `items` with at most `concurrency` at once; the items of one ordering group one at a
 * time, in order, and none after the first of its group that failed (`run` resolves false).
 * Items without a group each run on their own. `skip` is told of every item not started:
 * held back behind its group's failure, or the batch closed (`closed()` became true).
 */
export const schedule = async <T extends { group?: string }>(items: readonly T[], concurrency: number, hooks: {
  run: (item: T) => Promise<boolean>
  skip: (item: T, why: 'held-back' | 'closed') => Promise<void> | void
  closed: () => boolean
}): Promise<void> => {
  const lanes: T[][] = []
  const byGroup = new Map<string, T[]>()
  for (const item of items) {
    if (item.group === undefined) { lanes.push([item]); continue }
    const lane = byGroup.get(item.group)
    if (lane === undefined) {
      const created = [item]
      byGroup.set(item.group, created)
      lanes.push(created)
    } else lane.push(item)
  }
  await forEachBounded(lanes, concurrency, async (lane) => {
    let failed = false
    for (const item of lane) {
      // Checked right before starting, with nothing awaited in between: a record is either
      // started or skipped, never both.
      if (failed) await hooks.skip(item, 'held-back')
      else if (hooks.closed()) await hooks.skip(item, 'closed')
      else failed = !await hooks.run(item)
    }
  })
}
