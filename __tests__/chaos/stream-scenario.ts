import type { KinesisStreamRecord } from 'aws-lambda'
import { freshTable } from '../support/dynamodb.js'
import { audit, type ChaosReport, type Delivered } from './audit.js'
import { Consumer, idempotencyOptions } from './consumer.js'
import { newFaultCounters } from './dynamodb-faults.js'
import { fateOf } from './fates.js'
import { Invocation, type CrashPhase, type Signal } from './invocation.js'
import { Ledger } from './ledger.js'
import { streamFor } from './prng.js'
import type { ChaosConfig, RunStats } from './scenario.js'
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

type StreamInvocation = Invocation<ShardBatch>
interface Parked { consumer: Consumer<KinesisStreamRecord>, wakeAt: number, killedAs: CrashPhase }

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
  const stats: RunStats = {
    messages: 0, producerDuplicates: 0, invocations: 0, deliveries: 0, lostAcks: 0, handlerThrows: 0,
    transientFailures: 0, permanentPayments: 0, crashes: new Map(), virtualMs: 0, stuck: false
  }
  const crashed = (phase: CrashPhase): void => { stats.crashes.set(phase, (stats.crashes.get(phase) ?? 0) + 1) }

  // What the producer puts, and when: each payment once, some a second time later on (same data, same key).
  const plan = streamFor(seed, 'producer')
  const puts: Array<{ at: number, paymentId: string, amount: number, partitionKey: string, duplicate: boolean }> = []
  const permanent = new Set<string>()
  for (let i = 1; i <= config.payments; i++) {
    const payment = { at: startedAt + i * plan.int(0, 40), paymentId: `pay-${i}`, amount: plan.int(100, 99_999), partitionKey: `account-${plan.int(1, settings.partitionKeys)}` }
    puts.push({ ...payment, duplicate: false })
    if (plan.chance(rates.producerDuplicate)) puts.push({ ...payment, at: payment.at + plan.int(0, config.duplicateWithinMs), duplicate: true })
    if (plan.chance(rates.permanentFailure)) permanent.add(payment.paymentId)
  }
  puts.sort((a, b) => a.at - b.at)
  stats.permanentPayments = permanent.size

  const charge = streamGateway({ seed, rates, permanent, stats, stream, ledger, clock })
  const normalize = settings.keyBy === 'normalizer-path'
  const skews = streamFor(seed, 'skew')
  const consumers = Array.from({ length: config.consumers }, (_, i) => new Consumer<KinesisStreamRecord>({
    id: `consumer-${i + 1}`,
    offsetMs: skews.int(-config.maxSkewMs, config.maxSkewMs),
    clock,
    endpoint: config.endpoint,
    tableName: table.tableName,
    middy: config.middy,
    // No mode: auto recognises `aws:kinesis`. The default key (eventID) differs between a
    // payment and its producer duplicate, so the key is the payment id, from the data.
    options: idempotencyOptions(config, { key: normalize ? 'kinesis.data.paymentId' : (record: KinesisStreamRecord) => paymentOfKinesis(record).paymentId }),
    faults: { seed, rate: rates.dynamoFault, maxAttempts: config.sdkMaxAttempts },
    counters,
    charge,
    shape: kinesisShape(normalize)
  }))

  const invocations = new Map<string, StreamInvocation>()
  const parked = new Map<StreamInvocation, Parked>()
  const died = (consumer: Consumer<KinesisStreamRecord>, invocation: StreamInvocation, phase: CrashPhase): void => {
    crashed(phase)
    // Lambda learns of the crash (or the kill) and retries the shard's batch.
    stream.fail(invocation.delivery, clock.now())
    consumer.finish()
    consumer.coldStart()
  }

  const handle = async (consumer: Consumer<KinesisStreamRecord>, invocation: StreamInvocation, signal: Signal): Promise<void> => {
    switch (signal.kind) {
      case 'parked':
        parked.set(invocation, { consumer, wakeAt: signal.wakeAt, killedAs: signal.killedAs })
        return
      case 'settled':
        consumer.finish()
        if (invocation.fate.lostAck) stats.lostAcks++
        // A function error, or an answer that never reached Lambda: the whole batch again.
        if (invocation.fate.lostAck || signal.error !== undefined) stream.fail(invocation.delivery, clock.now())
        else stream.complete(invocation.delivery, JSON.parse(JSON.stringify(signal.response ?? null)), clock.now())
        return
      case 'crashed':
        await invocation.quiescent()
        died(consumer, invocation, signal.phase)
    }
  }

  let nextPut = 0
  for (;;) {
    const now = clock.now()
    while (nextPut < puts.length && (puts[nextPut]?.at ?? Infinity) <= now) {
      const put = puts[nextPut++] as (typeof puts)[number]
      stream.put({ paymentId: put.paymentId, amount: put.amount }, put.partitionKey, now)
      stats.messages++
      if (put.duplicate) stats.producerDuplicates++
    }

    // Parked handlers whose time has come wake up; those past their deadline are killed by Lambda.
    const due = [...parked].filter(([inv, p]) => Math.min(p.wakeAt, inv.deadline) <= now)
      .sort(([a, p], [b, q]) => p.wakeAt - q.wakeAt || a.id.localeCompare(b.id))
    for (const [invocation, p] of due) {
      parked.delete(invocation)
      if (p.wakeAt > invocation.deadline) {
        invocation.kill(p.killedAs)
        died(p.consumer, invocation, p.killedAs)
        continue
      }
      invocation.resume()
      await handle(p.consumer, invocation, await invocation.next())
    }

    // Idle consumers take the shards' ready batches (one in flight per shard).
    const pollOrder = streamFor(seed, 'poll', now)
    for (let polled = true; polled;) {
      polled = false
      for (const consumer of pollOrder.shuffle(consumers)) {
        if (consumer.current !== undefined) continue
        const batch = stream.receive(now)
        if (batch === undefined) continue
        polled = true
        stats.deliveries += batch.records.length
        const id = `inv-${++stats.invocations}`
        const invocation = new Invocation({ id, consumerId: consumer.id, delivery: batch, startedAt: now, deadline: now + config.functionTimeoutMs, fate: fateOf(seed, id, batch.records.length, rates, config.functionTimeoutMs) })
        if (invocation.fate.throwAtEntry && invocation.fate.crash === undefined) stats.handlerThrows++
        invocations.set(id, invocation)
        consumer.start(invocation)
        await handle(consumer, invocation, await invocation.next())
      }
    }

    if (nextPut >= puts.length && stream.drained() && parked.size === 0) break
    const next = Math.min(
      puts[nextPut]?.at ?? Infinity,
      stream.nextReadyAt(now) ?? Infinity,
      ...[...parked].map(([inv, p]) => Math.min(p.wakeAt, inv.deadline))
    )
    if (!Number.isFinite(next) || next - startedAt > config.maxVirtualMs) {
      stats.stuck = true
      break
    }
    clock.advanceTo(next)
  }
  stats.virtualMs = clock.now() - startedAt

  // Past every lease (a lease ends at its owner's deadline, in its owner's clock).
  const lastDeadline = Math.max(clock.now(), ...[...invocations.values()].map((i) => i.deadline))
  clock.advanceTo(lastDeadline + 2 * config.maxSkewMs + 1000)
  const items = await table.items()
  for (const consumer of consumers) consumer.destroy()
  await table.drop()
  const paymentOf = (data: string): string => (JSON.parse(Buffer.from(data, 'base64').toString()) as { paymentId: string }).paymentId
  const delivered: Delivered = {
    label: `${config.profile}: Kinesis, ${settings.shards} shard(s), ${settings.partitionKeys} partition keys, ${config.consumers} consumers, batches of ${config.batchSize}, ` +
      `${settings.maxRetryAttempts} retries, key ${normalize ? 'by event-normalizer path' : 'by function'}, ${config.middyName}`,
    // Checkpointed past as done: its payment must have taken effect (by this record or an earlier copy).
    lost: stream.records.filter((r) => r.state === 'done' && !ledger.applied(paymentOf(r.data))).map((r) => r.sequenceNumber),
    notDrained: stream.records.filter((r) => r.state === 'pending').map((r) => r.sequenceNumber),
    deadLettered: stream.deadLetters.length
  }
  return audit({ config, stats, delivered, ledger, invocations, consumers, items, counters, now: clock.now() })
}
