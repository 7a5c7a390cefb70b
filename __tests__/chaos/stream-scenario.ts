import type { KinesisStreamRecord } from 'aws-lambda'
import { freshTable } from '../support/dynamodb.js'
import { audit, type ChaosReport, type Delivered } from './audit.js'
import { Consumer, dynamoDBConnection, idempotencyOptions } from './consumer.js'
import { newFaultCounters } from './store-faults.js'
import { runLambdaLoop } from './lambda-loop.js'
import { Ledger } from './ledger.js'
import { planPuts, producing } from './producer.js'
import { streamFor } from './prng.js'
import { newRunStats, type ChaosConfig } from './scenario.js'
import { KinesisStream, type ShardBatch } from './shard-simulator.js'
import { kinesisShape, paymentOfKinesis, streamGateway } from './stream-payments.js'
import { VirtualClock } from './virtual-clock.js'

/** The stream profile's settings (the queue's settings of ChaosConfig do not apply). */
export interface StreamSettings {
  shards: number
  /** Payments are spread over this many partition keys (accounts): the ordering groups. */
  partitionKeys: number
  maxRetryAttempts: number
  retryBaseMs: number
  retryCapMs: number
  /**
   * Where the consumer finds the payment id: a key function decoding the base64 data itself,
   * or `@middy/event-normalizer` first and the path `kinesis.data.paymentId`.
   */
  keyBy: 'key-function' | 'normalizer-path'
}

/**
 * One chaos run on a Kinesis stream: payments are put on the stream (some twice, by the
 * producer), each under its account's partition key; consumers take the shards' batches and
 * run the real Middy stack (`idempotency` in auto mode, `perRecord`) against DynamoDB Local,
 * with the same fates as the queue runs. Lambda's side (checkpoints, retries, the on-failure
 * destination) is the shard simulator's. Returns the audit of what happened.
 */
export const runStreamChaos = async (config: ChaosConfig, settings: StreamSettings): Promise<ChaosReport> => {
  const { seed, rates } = config
  const clock = new VirtualClock()
  const startedAt = clock.now()
  const table = await freshTable()
  const stream = new KinesisStream({ shards: settings.shards, batchSize: config.batchSize, maxRetryAttempts: settings.maxRetryAttempts, retryBaseMs: settings.retryBaseMs, retryCapMs: settings.retryCapMs })
  const ledger = new Ledger()
  const counters = newFaultCounters()
  const stats = newRunStats()

  const { puts, permanent } = planPuts(config, settings.partitionKeys, startedAt)
  stats.permanentPayments = permanent.size

  const charge = streamGateway({ seed, rates, permanent, stats, stream, ledger, clock })
  const normalize = settings.keyBy === 'normalizer-path'
  const skews = streamFor(seed, 'skew')
  const consumers = Array.from({ length: config.consumers }, (_, i) => new Consumer<KinesisStreamRecord>({
    id: `consumer-${i + 1}`,
    offsetMs: skews.int(-config.maxSkewMs, config.maxSkewMs),
    clock,
    connection: dynamoDBConnection(config.endpoint, table.tableName, config.sdkMaxAttempts),
    middy: config.middy,
    // No mode: auto recognises `aws:kinesis`. The default key (eventID) differs between a
    // payment and its producer duplicate, so the key is the payment id, from the data.
    options: idempotencyOptions(config, { key: normalize ? 'kinesis.data.paymentId' : (record: KinesisStreamRecord) => paymentOfKinesis(record).paymentId }),
    faults: { seed, rate: rates.storeFault },
    counters,
    charge,
    shape: kinesisShape(normalize)
  }))

  const invocations = await runLambdaLoop<KinesisStreamRecord, ShardBatch>({
    seed, rates, clock, consumers, stats,
    functionTimeoutMs: config.functionTimeoutMs, maxSkewMs: config.maxSkewMs, maxVirtualMs: config.maxVirtualMs,
    source: {
      produce: producing(puts, (payment, key, now) => { stream.put(payment, key, now) }, stats),
      // Idle consumers take the shards' ready batches (one in flight per shard).
      receive: (now) => stream.receive(now),
      nextReadyAt: (now) => stream.nextReadyAt(now),
      drained: () => stream.drained(),
      // A function error, or an answer that never reached Lambda: the whole batch again.
      settled: (delivery, answered, now) => answered === undefined
        ? stream.fail(delivery, now)
        : stream.complete(delivery, answered.response, now),
      // Lambda learns of the crash (or the kill) and retries the shard's batch.
      died: (delivery, now) => { stream.fail(delivery, now) }
    }
  })
  const items = await table.items()
  for (const consumer of consumers) await consumer.close()
  await table.drop()
  const paymentOf = (data: string): string => (JSON.parse(Buffer.from(data, 'base64').toString()) as { paymentId: string }).paymentId
  const delivered: Delivered = {
    label: `${config.profile}: Kinesis, ${settings.shards} shard(s), ${settings.partitionKeys} partition keys, ${config.consumers} consumers, batches of ${config.batchSize}, ` +
      `${settings.maxRetryAttempts} retries, key ${normalize ? 'by event-normalizer path' : 'by function'}, ${config.middyName}`,
    // Checkpointed past as done: its payment must have taken effect (by this record or an earlier copy).
    lost: stream.records.filter((r) => r.state === 'done' && !ledger.applied(paymentOf(r.data))).map((r) => r.sequenceNumber),
    notDrained: stream.records.filter((r) => r.state === 'pending').map((r) => r.sequenceNumber),
    deadLettered: stream.deadLetters.length,
    answers: stream.answers
  }
  return audit({ config, stats, delivered, ledger, invocations, consumers, items, counters, now: clock.now() })
}
