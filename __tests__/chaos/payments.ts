import type { SQSRecord } from 'aws-lambda'
import type { TransactItem } from '../../src/store.js'
import type { Charge } from './consumer.js'
import type { Rates } from './fates.js'
import type { Invocation } from './invocation.js'
import type { Ledger } from './ledger.js'
import type { OrdersTable } from './orders.js'
import { streamFor } from './prng.js'
import type { RunStats } from './scenario.js'
import type { QueuedMessage } from './sqs-simulator.js'
import type { VirtualClock } from './virtual-clock.js'

export interface Gateway {
  seed: number
  rates: Rates
  /** Payments whose charge always fails. */
  permanent: ReadonlySet<string>
  /** Payments whose work makes what cannot be stored (see `Rates.oversized`). */
  oversized: ReadonlySet<string>
  stats: RunStats
  byId: ReadonlyMap<string, QueuedMessage>
  groups: ReadonlyMap<string, QueuedMessage[]>
  ledger: Ledger
  clock: VirtualClock
  /** The transact profile: effects are `transact` writes to this table instead of ledger entries. */
  orders?: OrdersTable
}

/** More than DynamoDB's 400 KB item: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html */
const OVERSIZED = 'x'.repeat(410 * 1024)

const paymentOf = (m: QueuedMessage): string => (JSON.parse(m.body) as { paymentId: string }).paymentId

/**
 * The payment gateway: fails when the seed says so, otherwise charges — on the ledger at once,
 * or (transact profile) by queueing the payment's writes, which take effect when the record's
 * completion commits. Before charging it checks FIFO order: every earlier message of the group
 * must have taken effect or been dead-lettered.
 */
export const gateway = (g: Gateway): Charge => {
  const { seed, rates, ledger, orders } = g
  /**
   * Known applied, or (transact) found in the table: a commit whose answer was lost still counts.
   * The read goes through the invocation, so that a process that died meanwhile goes no further.
   */
  const applied = async (paymentId: string, invocation: Invocation): Promise<boolean> => {
    if (ledger.applied(paymentId)) return true
    if (orders === undefined || !await invocation.request(async () => await orders.applied(paymentId))) return false
    ledger.markApplied(paymentId)
    return true
  }
  return async (record: SQSRecord, invocation, transact) => {
    const { paymentId, amount } = JSON.parse(record.body) as { paymentId: string, amount: number }
    if (g.permanent.has(paymentId)) throw new Error(`card declined for ${paymentId} (permanent, injected)`)
    if (streamFor(seed, 'transient', record.messageId, record.attributes.ApproximateReceiveCount).chance(rates.transientFailure)) {
      g.stats.transientFailures++
      throw new Error(`gateway unavailable for ${paymentId} (transient, injected)`)
    }
    const message = g.byId.get(record.messageId) as QueuedMessage
    if (message.groupId !== undefined) {
      const overtaken: string[] = []
      for (const m of g.groups.get(message.groupId) ?? []) {
        if (m.sequence < message.sequence && m.state !== 'dead-lettered' && !await applied(paymentOf(m), invocation)) overtaken.push(m.messageId)
      }
      if (overtaken.length > 0) ledger.orderViolations.push({ paymentId, messageId: message.messageId, groupId: message.groupId, overtaken })
    }
    const effect = {
      paymentId,
      messageId: record.messageId,
      ...(message.groupId === undefined ? {} : { groupId: message.groupId }),
      sequence: message.sequence,
      invocationId: invocation.id,
      consumerId: invocation.consumerId,
      at: g.clock.now()
    }
    const big = g.oversized.has(paymentId)
    if (orders === undefined) {
      ledger.charge(effect)
      // The charge happened; its receipt is more than a record can keep.
      return big ? { charged: paymentId, receipt: OVERSIZED } : undefined
    }
    const writes = orders.writes(effect, amount)
    const put = writes[0] as Extract<TransactItem, { Put: unknown }>
    if (big) writes[0] = { Put: { ...put.Put, Item: { ...put.Put.Item, receipt: OVERSIZED } } }
    transact(...writes)
    return undefined
  }
}
