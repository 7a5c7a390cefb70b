import { IdempotencyConfigError, IdempotencyTransactError } from '../errors.js'
import { needsCommit, storeName } from './completion.js'
import type { LifecycleConfig } from './config.js'

// The first refusal of each queue: a function that catches what `transact` threw and returns
// must not complete its unit without the writes it meant to commit (nor with only some of them).
const refusals = new WeakMap<readonly unknown[], Error>()

/** The error a `transact` into `writes` was refused with, if one was: the unit fails with it. */
export const transactRefusal = (writes: readonly unknown[]): Error | undefined => refusals.get(writes)

/**
 * A `transact` that queues into `writes`, checking each entry where it is queued (by the
 * store's own rules and limits) so that the mistake is named at its line. `open()` is false
 * once the work has returned: later writes could not be part of its commit.
 */
export const queueTransact = (
  config: LifecycleConfig,
  key: string | undefined,
  writes: unknown[],
  open: () => boolean
) => (...items: unknown[]): void => {
  if (!open()) throw new IdempotencyConfigError('transact was called after the work had returned: nothing was queued')
  try {
    queue(config, key, writes, items)
  } catch (error) {
    if (!refusals.has(writes)) refusals.set(writes, error as Error)
    throw error
  }
}

const queue = (config: LifecycleConfig, key: string | undefined, writes: unknown[], items: unknown[]): void => {
  const { store } = config
  if (store.commit === undefined) {
    throw needsCommit(config, 'transact', ', so the writes would not be applied with it')
  }
  items.forEach((item, i) => {
    const problem = store.checkWrite?.(item)
    if (problem !== undefined) {
      throw new IdempotencyTransactError(
        `transact entry ${writes.length + i} is not an entry ${storeName(config)} can write: ${problem}`,
        { key, entry: writes.length + i, code: 'ValidationError' })
    }
  })
  const maxWrites = store.limits?.transaction?.maxWrites
  if (maxWrites !== undefined && writes.length + items.length > maxWrites) {
    throw new IdempotencyTransactError(
      `transact: ${writes.length + items.length} writes for one unit of work, ` +
      `more than the ${maxWrites} that fit in one transaction with its completion; nothing will be written`,
      { key, code: 'TooManyItems' })
  }
  writes.push(...items)
}
