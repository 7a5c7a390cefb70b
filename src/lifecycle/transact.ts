import { IdempotencyConfigError, IdempotencyTransactError } from '../errors.js'
import type { TransactItem } from '../stores/store.js'
import { checkTransactItem, MAX_TRANSACT_ITEMS } from './commit.js'
import type { LifecycleConfig } from './config.js'

/**
 * A `transact` that queues into `writes`, checking each entry where it is queued so that the
 * mistake is named at its line. `open()` is false once the work has returned: later writes
 * could not be part of its commit.
 */
export const queueTransact = (config: LifecycleConfig, key: string | undefined, writes: TransactItem[], open: () => boolean) => (...items: TransactItem[]): void => {
  if (config.store.commit === undefined) {
    throw new IdempotencyConfigError('transact needs a store that commits transactions (DynamoDBStore); MemoryStore does not apply DynamoDB writes')
  }
  if (!open()) throw new IdempotencyConfigError('transact was called after the work had returned: nothing was queued')
  items.forEach((item, i) => {
    const problem = checkTransactItem(item)
    if (problem !== undefined) {
      throw new IdempotencyTransactError(`transact entry ${writes.length + i} is not a TransactWriteItems entry: ${problem}`, { key, entry: writes.length + i, code: 'ValidationError' })
    }
  })
  if (writes.length + items.length > MAX_TRANSACT_ITEMS) {
    throw new IdempotencyTransactError(`transact: ${writes.length + items.length} writes for one unit of work, more than the ${MAX_TRANSACT_ITEMS} that fit in one transaction with its completion; nothing will be written`,
      { key, code: 'TooManyItems' })
  }
  writes.push(...items)
}
