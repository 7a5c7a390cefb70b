import eventNormalizer from '@middy/event-normalizer'
import type { MSKEvent, MSKRecord } from 'aws-lambda'
import type { Charge, RecordShape } from './consumer.js'
import type { Rates } from './fates.js'
import type { KafkaBatch, KafkaTopic, LogRecord } from './kafka-simulator.js'
import type { Ledger } from './ledger.js'
import { logGateway, type Payment } from './log-gateway.js'
import type { RunStats } from './scenario.js'
import type { VirtualClock } from './virtual-clock.js'

/**
 * The payment a Kafka record carries: its value is base64 JSON as Lambda delivers it, or
 * already decoded by `@middy/event-normalizer` when that runs before us.
 */
export const paymentOfKafka = (record: MSKRecord): Payment => {
  const value = record.value as unknown
  return typeof value === 'string' ? JSON.parse(Buffer.from(value, 'base64').toString()) as Payment : value as Payment
}

/**
 * The Kafka consumer of the README: no partial-batch middleware (the middleware answers
 * Lambda's `{ partition, offset }` itself), optionally `@middy/event-normalizer` first. The
 * event is Kafka's own (`records` by topic-partition); records of a partition run one at a time
 * and may be held back unrun, so the slow record waits for quiet.
 */
export const kafkaShape = (normalize: boolean): RecordShape<MSKRecord> => ({
  paymentOf: paymentOfKafka,
  outer: () => normalize ? [eventNormalizer()] : [],
  neighbours: 'idle',
  event: {
    of: (delivery) => (delivery as KafkaBatch).event,
    records: (event: MSKEvent) => Object.values(event.records).flat()
  }
})

export interface KafkaGateway {
  seed: number
  rates: Rates
  /** Payments whose charge always fails. */
  permanent: ReadonlySet<string>
  stats: RunStats
  topic: KafkaTopic
  ledger: Ledger
  clock: VirtualClock
}

/** What Lambda and the audit name a record by. */
export const placeId = (r: { topic: string, partition: number, offset: number }): string => `${r.topic}-${r.partition}@${r.offset}`

/**
 * The payment gateway of the Kafka profile (log-gateway.ts), with order defined per
 * topic-partition: when a record R takes effect, every record of its partition at a lower
 * offset must already have had its payment take effect (by itself or by an earlier copy of
 * the same payment) or have been sent to the on-failure destination.
 */
export const kafkaGateway = (g: KafkaGateway): Charge<MSKRecord> => {
  const { ledger, topic } = g
  const byPlace = new Map<string, LogRecord>()
  const recordOf = (id: string): LogRecord => {
    if (byPlace.size !== topic.records.length) for (const r of topic.records) byPlace.set(placeId(r), r)
    return byPlace.get(id) as LogRecord
  }
  const paymentOf = (r: LogRecord): string => (JSON.parse(Buffer.from(r.value, 'base64').toString()) as Payment).paymentId
  return logGateway({
    ...g,
    paymentOf: paymentOfKafka,
    placeOf: (record) => ({ id: placeId(record), group: `${record.topic}-${record.partition}`, index: recordOf(placeId(record)).index }),
    overtaken: (place) => {
      const self = recordOf(place.id)
      return topic.records
        .filter((r) => r.partition === self.partition && r.offset < self.offset && r.state !== 'dead-lettered' && !ledger.applied(paymentOf(r)))
        .map(placeId)
    }
  })
}
