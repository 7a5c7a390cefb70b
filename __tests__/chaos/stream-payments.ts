import eventNormalizer from '@middy/event-normalizer'
import type { KinesisStreamRecord } from 'aws-lambda'
import type { Charge, RecordShape } from './consumer.js'
import type { Rates } from './fates.js'
import type { Ledger } from './ledger.js'
import { streamFor } from './prng.js'
import type { RunStats } from './scenario.js'
import type { KinesisStream, StreamRecord } from './shard-simulator.js'
import type { VirtualClock } from './virtual-clock.js'

interface Payment { paymentId: string, amount: number }

/**
 * The payment a Kinesis record carries: its data is base64 JSON as Lambda delivers it, or
 * already decoded by `@middy/event-normalizer` when that runs before us.
 */
export const paymentOfKinesis = (record: KinesisStreamRecord): Payment => {
  const data = record.kinesis.data as unknown
  return typeof data === 'string' ? JSON.parse(Buffer.from(data, 'base64').toString()) as Payment : data as Payment
}

/**
 * The Kinesis consumer of the README: no partial-batch middleware (the middleware answers
 * Lambda itself), optionally `@middy/event-normalizer` first. Records of a partition key run
 * one at a time and may be held back unrun, so the slow record waits for quiet.
 */
export const kinesisShape = (normalize: boolean): RecordShape<KinesisStreamRecord> => ({
  paymentOf: paymentOfKinesis,
  outer: () => normalize ? [eventNormalizer()] : [],
  neighbours: 'idle'
})

export interface StreamGateway {
  seed: number
  rates: Rates
  /** Payments whose charge always fails. */
  permanent: ReadonlySet<string>
  stats: RunStats
  stream: KinesisStream
  ledger: Ledger
  clock: VirtualClock
}

/**
 * The payment gateway of the stream profile: fails when the seed says so, otherwise charges
 * the ledger. Before charging it checks per-key order, which is defined here: when a record R
 * of partition key P takes effect, every earlier record of P on its shard (lower sequence
 * number) must already have had its payment take effect (by itself or by an earlier copy of
 * the same payment) or have been sent to the on-failure destination. Otherwise R overtook it:
 * an order violation naming the records overtaken.
 */
export const streamGateway = (g: StreamGateway): Charge<KinesisStreamRecord> => {
  const { seed, rates, ledger, stream } = g
  const bySequence = new Map<string, StreamRecord>()
  const recordOf = (sequenceNumber: string): StreamRecord => {
    if (bySequence.size !== stream.records.length) for (const r of stream.records) bySequence.set(r.sequenceNumber, r)
    return bySequence.get(sequenceNumber) as StreamRecord
  }
  const paymentOf = (r: StreamRecord): string => (JSON.parse(Buffer.from(r.data, 'base64').toString()) as Payment).paymentId
  return async (record, invocation) => {
    const { paymentId } = paymentOfKinesis(record)
    const { sequenceNumber, partitionKey } = record.kinesis
    if (g.permanent.has(paymentId)) throw new Error(`card declined for ${paymentId} (permanent, injected)`)
    // Streams count no deliveries: a fresh draw for each invocation that runs the record.
    if (streamFor(seed, 'transient', sequenceNumber, invocation.id).chance(rates.transientFailure)) {
      g.stats.transientFailures++
      throw new Error(`gateway unavailable for ${paymentId} (transient, injected)`)
    }
    const self = recordOf(sequenceNumber)
    const overtaken = stream.records
      .filter((r) => r.shard === self.shard && r.partitionKey === partitionKey && r.index < self.index && r.state !== 'dead-lettered' && !ledger.applied(paymentOf(r)))
      .map((r) => r.sequenceNumber)
    if (overtaken.length > 0) ledger.orderViolations.push({ paymentId, messageId: sequenceNumber, groupId: partitionKey, overtaken })
    ledger.charge({ paymentId, messageId: sequenceNumber, groupId: partitionKey, sequence: self.index, invocationId: invocation.id, consumerId: invocation.consumerId, at: g.clock.now() })
  }
}
