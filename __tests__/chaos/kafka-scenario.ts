import type { MSKRecord } from 'aws-lambda'
import { freshTable } from '../support/dynamodb.js'
import { audit, type ChaosReport, type Delivered } from './audit.js'
import { Consumer, dynamoDBConnection, idempotencyOptions } from './consumer.js'
import { kafkaGateway, kafkaShape, paymentOfKafka, placeId } from './kafka-payments.js'
import { KafkaTopic, type KafkaBatch } from './kafka-simulator.js'
import { runLambdaLoop } from './lambda-loop.js'
import { Ledger } from './ledger.js'
import { planPuts, producing } from './producer.js'
import { streamFor } from './prng.js'
import { newRunStats, type ChaosConfig } from './scenario.js'
import { newFaultCounters } from './store-faults.js'
import { VirtualClock } from './virtual-clock.js'

/** The Kafka profile's settings (the queue's settings of ChaosConfig do not apply). */
export interface KafkaSettings {
  partitions: number
  /** Payments are spread over this many record keys (accounts), each always on the same partition. */
  partitionKeys: number
  maxRetryAttempts: number
  retryBaseMs: number
  retryCapMs: number
  /** Amazon MSK or a self-managed cluster: what the event names the cluster by (the default key's scope). */
  eventSource: 'aws:kafka' | 'SelfManagedKafka'
  /**
   * Where the consumer finds the payment id: the path `value.paymentId` into the base64 value
   * (the middleware reads the decoded JSON), the same path behind `@middy/event-normalizer`, or
   * a key function decoding the value itself.
   */
  keyBy: 'value-path' | 'normalizer-path' | 'key-function'
}

/**
 * One chaos run on a Kafka topic: payments are produced (some twice, by the producer), each
 * under its account's key, so on its account's partition; consumers take the partitions'
 * batches as Kafka events and run the real Middy stack (`idempotency` in auto mode,
 * `perRecord`) against DynamoDB Local, with the same fates as the other runs. Lambda's side
 * (committed offsets, retries, the on-failure destination) is the Kafka simulator's. Returns
 * the audit of what happened.
 */
export const runKafkaChaos = async (config: ChaosConfig, settings: KafkaSettings): Promise<ChaosReport> => {
  const { seed, rates } = config
  const clock = new VirtualClock()
  const startedAt = clock.now()
  const table = await freshTable()
  const topic = new KafkaTopic({
    topic: 'payments', partitions: settings.partitions, batchSize: config.batchSize, eventSource: settings.eventSource,
    maxRetryAttempts: settings.maxRetryAttempts, retryBaseMs: settings.retryBaseMs, retryCapMs: settings.retryCapMs
  })
  const ledger = new Ledger()
  const counters = newFaultCounters()
  const stats = newRunStats()
  const { puts, permanent } = planPuts(config, settings.partitionKeys, startedAt)
  stats.permanentPayments = permanent.size

  const charge = kafkaGateway({ seed, rates, permanent, stats, topic, ledger, clock })
  const skews = streamFor(seed, 'skew')
  const consumers = Array.from({ length: config.consumers }, (_, i) => new Consumer<MSKRecord>({
    id: `consumer-${i + 1}`,
    offsetMs: skews.int(-config.maxSkewMs, config.maxSkewMs),
    clock,
    connection: dynamoDBConnection(config.endpoint, table.tableName, config.sdkMaxAttempts),
    middy: config.middy,
    // No mode: auto recognises the event's `eventSource`. The default key (the record's place in
    // the log) differs between a payment and its producer duplicate, so the key is the payment id.
    options: idempotencyOptions(config, { key: settings.keyBy === 'key-function' ? (record: MSKRecord) => paymentOfKafka(record).paymentId : 'value.paymentId' }),
    faults: { seed, rate: rates.storeFault },
    counters,
    charge,
    shape: kafkaShape(settings.keyBy === 'normalizer-path')
  }))

  const invocations = await runLambdaLoop<MSKRecord, KafkaBatch>({
    seed, rates, clock, consumers, stats,
    functionTimeoutMs: config.functionTimeoutMs, maxSkewMs: config.maxSkewMs, maxVirtualMs: config.maxVirtualMs,
    source: {
      produce: producing(puts, (payment, key, now) => { topic.produce(payment, key, now) }, stats),
      // Idle consumers take the ready records of the partitions not in flight.
      receive: (now) => topic.receive(now),
      nextReadyAt: (now) => topic.nextReadyAt(now),
      drained: () => topic.drained(),
      // A function error, or an answer that never reached Lambda: each partition of the batch again.
      settled: (delivery, answered, now) => answered === undefined ? topic.fail(delivery, now) : topic.complete(delivery, answered.response, now),
      // Lambda learns of the crash (or the kill) and reads the batch's partitions again.
      died: (delivery, now) => { topic.fail(delivery, now) }
    }
  })
  const items = await table.items()
  for (const consumer of consumers) await consumer.close()
  await table.drop()
  const paymentOf = (value: string): string => (JSON.parse(Buffer.from(value, 'base64').toString()) as { paymentId: string }).paymentId
  const delivered: Delivered = {
    label: `${config.profile}: Kafka (${settings.eventSource}), ${settings.partitions} partitions, ${settings.partitionKeys} keys, ${config.consumers} consumers, ` +
      `batches of ${config.batchSize}, ${settings.maxRetryAttempts} retries, key by ${settings.keyBy}, ${config.middyName}`,
    // Committed past as done: its payment must have taken effect (by this record or an earlier copy).
    lost: topic.records.filter((r) => r.state === 'done' && !ledger.applied(paymentOf(r.value))).map(placeId),
    notDrained: topic.records.filter((r) => r.state === 'pending').map(placeId),
    deadLettered: topic.deadLetters.length,
    answers: topic.answers
  }
  return audit({ config, stats, delivered, ledger, invocations, consumers, items, counters, now: clock.now() })
}
