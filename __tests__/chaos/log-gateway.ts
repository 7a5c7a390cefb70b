import type { Charge } from './consumer.js'
import type { Rates } from './fates.js'
import type { Ledger } from './ledger.js'
import { streamFor } from './prng.js'
import type { RunStats } from './scenario.js'
import type { VirtualClock } from './virtual-clock.js'

export interface Payment { paymentId: string, amount: number }

/** Where a record sits in its log (a Kinesis shard, a Kafka partition). */
export interface Place {
  /** What Lambda names it by: a sequence number, `<topic>-<partition>@<offset>`. */
  id: string
  /** The records whose order is checked together (a partition key, a topic-partition). */
  group: string
  /** Put order over the whole log. */
  index: number
}

export interface LogGateway<R> {
  seed: number
  rates: Rates
  /** Payments whose charge always fails. */
  permanent: ReadonlySet<string>
  stats: RunStats
  ledger: Ledger
  clock: VirtualClock
  paymentOf: (record: R) => Payment
  placeOf: (record: R) => Place
  /**
   * The records `place` would overtake: earlier records of its group (in the log's own order)
   * whose payment has not taken effect (by themselves or by an earlier copy) and that were not
   * sent to the on-failure destination.
   */
  overtaken: (place: Place) => string[]
}

/**
 * The payment gateway of a log's runs: fails when the seed says so, otherwise charges the
 * ledger. Before charging it checks order: a record that takes effect while an earlier record
 * of its group has neither taken effect nor been sent to the on-failure destination overtook
 * it, an order violation naming the records overtaken.
 */
export const logGateway = <R>(g: LogGateway<R>): Charge<R> => async (record, invocation) => {
  const { paymentId } = g.paymentOf(record)
  const place = g.placeOf(record)
  if (g.permanent.has(paymentId)) throw new Error(`card declined for ${paymentId} (permanent, injected)`)
  // Logs count no deliveries: a fresh draw for each invocation that runs the record.
  if (streamFor(g.seed, 'transient', place.id, invocation.id).chance(g.rates.transientFailure)) {
    g.stats.transientFailures++
    throw new Error(`gateway unavailable for ${paymentId} (transient, injected)`)
  }
  const overtaken = g.overtaken(place)
  if (overtaken.length > 0) g.ledger.orderViolations.push({ paymentId, messageId: place.id, groupId: place.group, overtaken })
  g.ledger.charge({ paymentId, messageId: place.id, groupId: place.group, sequence: place.index, invocationId: invocation.id, consumerId: invocation.consumerId, at: g.clock.now() })
}
