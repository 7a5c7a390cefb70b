import eventNormalizer from '@middy/event-normalizer'
import type { KinesisStreamRecord } from 'aws-lambda'
import type { Charge, RecordShape } from './consumer.js'
import type { Rates } from './fates.js'
import type { Ledger } from './ledger.js'
import { logGateway, type Payment } from './log-gateway.js'
import type { RunStats } from './scenario.js'
import type { KinesisStream, StreamRecord } from './shard-simulator.js'
import type { VirtualClock } from './virtual-clock.js'

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
 * The payment gateway of the stream profile (log-gateway.ts), with per-key order defined here:
 * when a record R of partition key P takes effect, every earlier record of P on its shard
 * (lower sequence number) must already have had its payment take effect (by itself or by an
 * earlier copy of the same payment) or have been sent to the on-failure destination.
 */
export const streamGateway = (g: StreamGateway): Charge<KinesisStreamRecord> => {
  const { ledger, stream } = g
  const bySequence = new Map<string, StreamRecord>()
  const recordOf = (sequenceNumber: string): StreamRecord => {
    if (bySequence.size !== stream.records.length) for (const r of stream.records) bySequence.set(r.sequenceNumber, r)
    return bySequence.get(sequenceNumber) as StreamRecord
  }
  const paymentOf = (r: StreamRecord): string => (JSON.parse(Buffer.from(r.data, 'base64').toString()) as Payment).paymentId
  return logGateway({
    ...g,
    paymentOf: paymentOfKinesis,
    placeOf: (record) => ({ id: record.kinesis.sequenceNumber, group: record.kinesis.partitionKey, index: recordOf(record.kinesis.sequenceNumber).index }),
    overtaken: (place) => {
      const self = recordOf(place.id)
      return stream.records
        .filter((r) => r.shard === self.shard && r.partitionKey === self.partitionKey && r.index < self.index && r.state !== 'dead-lettered' && !ledger.applied(paymentOf(r)))
        .map((r) => r.sequenceNumber)
    }
  })
}
