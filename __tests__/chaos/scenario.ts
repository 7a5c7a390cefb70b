import type middy6 from '@middy/core'
import type { SQSRecord } from 'aws-lambda'
import { freshTable } from '../support/dynamodb.js'
import { audit, type ChaosReport, type Delivered } from './audit.js'
import { Consumer, dynamoDBConnection, idempotencyOptions, sqsShape, type StoreConnection } from './consumer.js'
import { sharedProcesses } from './managed-process.js'
import { newFaultCounters } from './store-faults.js'
import type { Rates } from './fates.js'
import type { CrashPhase } from './invocation.js'
import { runKafkaChaos, type KafkaSettings } from './kafka-scenario.js'
import { runLambdaLoop } from './lambda-loop.js'
import { Ledger } from './ledger.js'
import { OrdersTable } from './orders.js'
import { gateway } from './payments.js'
import { streamFor } from './prng.js'
import { RedisSite, type RedisSettings, type Restart } from './redis-site.js'
import { SqsQueue, type Delivery, type QueuedMessage } from './sqs-simulator.js'
import { runStreamChaos, type StreamSettings } from './stream-scenario.js'
import { VirtualClock } from './virtual-clock.js'

export interface ChaosConfig {
  seed: number
  /** Which set of rates and sizes (see configs.ts); with the seed, all it takes to replay a run. */
  profile: string
  /**
   * What a payment's effect is: a ledger entry made by the function, or `transact` writes
   * committed with its completion (`transact-only`: with `effects: 'transact-only'`, unclaimed).
   */
  effects: 'ledger' | 'transact' | 'transact-only'
  /** Distinct payments sent (producer duplicates come on top). */
  payments: number
  fifo: boolean
  /** FIFO only: message groups the payments are spread over. */
  groups: number
  consumers: number
  batchSize: number
  functionTimeoutMs: number
  visibilityTimeoutMs: number
  maxReceiveCount: number
  /** A producer duplicate is sent up to this long after the original. */
  duplicateWithinMs: number
  /** Each consumer's clock is off by up to this much, either way. */
  maxSkewMs: number
  /** The SDK's maxAttempts on every DynamoDB client. */
  sdkMaxAttempts: number
  /** From this receive on, a failure is kept as FAILED instead of released. */
  failFromAttempt: number
  localCacheSize: number
  rates: Rates
  middy: typeof middy6
  middyName: string
  endpoint: string
  /** Give up (and report a liveness failure) after this much virtual time. */
  maxVirtualMs: number
  /** The stream profile: a Kinesis stream instead of the queue (fifo, visibility and receive counts do not apply). */
  stream?: StreamSettings
  /** The kafka profile: a Kafka topic instead of the queue (fifo, visibility and receive counts do not apply). */
  kafka?: KafkaSettings
  /** How the handler is written: `perRecord` (the default), or returning a promise per record (the promises profile). */
  handler?: 'perRecord' | 'promises'
  /**
   * Where the records are kept: DynamoDB Local (the default), or a redis-server of the run's
   * own (`RedisStore`, ledger effects on the queue only), with its persistence and restarts in `redis`.
   */
  store?: 'dynamodb' | 'redis'
  redis?: RedisSettings
  /** The managed profile: each process's one stack serves this many invocations at once (Lambda Managed Instances); 1 by default. */
  invocationsPerProcess?: number
}

export interface RunStats {
  messages: number
  producerDuplicates: number
  invocations: number
  deliveries: number
  lostAcks: number
  handlerThrows: number
  transientFailures: number
  permanentPayments: number
  oversizedPayments: number
  crashes: Map<CrashPhase, number>
  virtualMs: number
  stuck: boolean
}

/** What happened to the store's server, when it runs one of its own (Redis). */
export interface ServerStats {
  restarts: Restart[]
  /** Store requests that failed because the server was down. */
  outageRefusals: number
}

/** The counters of a run, all at zero. */
export const newRunStats = (): RunStats => ({
  messages: 0, producerDuplicates: 0, invocations: 0, deliveries: 0, lostAcks: 0, handlerThrows: 0,
  transientFailures: 0, permanentPayments: 0, oversizedPayments: 0, crashes: new Map(), virtualMs: 0, stuck: false
})

/**
 * One chaos run: payments are sent (some twice, by the producer), consumers poll the
 * queue and run the real Middy stack against DynamoDB Local while the seed decides
 * crashes, faults, lost answers and slow handlers; virtual time moves from event to event.
 * Returns the audit of what happened. (The stream profile runs `runStreamChaos` instead.)
 */
export const runChaos = async (config: ChaosConfig): Promise<ChaosReport> => {
  const redis = config.store === 'redis' ? config.redis : undefined
  if (config.store === 'redis' && (redis === undefined || config.effects !== 'ledger' || config.stream !== undefined || config.kafka !== undefined)) {
    throw new Error('chaos: the Redis runs need their redis settings, ledger effects and the queue (RedisStore has no transact)')
  }
  if (config.stream !== undefined) return await runStreamChaos(config, config.stream)
  if (config.kafka !== undefined) return await runKafkaChaos(config, config.kafka)
  const { seed, rates } = config
  const clock = new VirtualClock()
  const startedAt = clock.now()
  const options = idempotencyOptions(config, { key: 'body.paymentId' })
  // RedisStore sets each key to expire (SET … PXAT) just after its record's expiry, and the server
  // reads that against its own, real clock, while the records' times are the suite's virtual ones.
  // The virtual clock starts in 2030, ahead of real time, so a key written at virtual time t expires
  // in real time at t + expiresAfterSeconds (7 days), years from now: no record expires in a run.
  // Should real time ever catch up with it, the run refuses to start rather than measure expiry.
  if (redis !== undefined && startedAt + (options.expiresAfterSeconds ?? 0) * 1000 < Date.now() + 24 * 3600 * 1000) {
    throw new Error('chaos: the virtual clock must start ahead of real time, or the Redis server would expire records during the run')
  }
  const site = redis === undefined ? undefined : await RedisSite.start(redis)
  const table = site === undefined ? await freshTable() : undefined
  const orders = config.effects === 'ledger' || table === undefined ? undefined : new OrdersTable(table.client)
  await orders?.create()
  const queue = new SqsQueue({
    fifo: config.fifo,
    visibilityTimeoutMs: config.visibilityTimeoutMs,
    maxReceiveCount: config.maxReceiveCount,
    batchSize: config.batchSize,
    random: streamFor(seed, 'queue')
  })
  const ledger = new Ledger()
  const counters = newFaultCounters()
  const stats = newRunStats()

  // What the producer sends, and when: each payment once, some a second time later on.
  const plan = streamFor(seed, 'producer')
  const sends: Array<{ at: number, paymentId: string, amount: number, groupId?: string, duplicate: boolean }> = []
  const permanent = new Set<string>()
  for (let i = 1; i <= config.payments; i++) {
    const paymentId = `pay-${i}`
    const at = startedAt + i * plan.int(0, 40)
    const amount = plan.int(100, 99_999)
    const groupId = config.fifo ? `group-${plan.int(1, config.groups)}` : undefined
    sends.push({ at, paymentId, amount, ...(groupId === undefined ? {} : { groupId }), duplicate: false })
    if (plan.chance(rates.producerDuplicate)) {
      sends.push({ at: at + plan.int(0, config.duplicateWithinMs), paymentId, amount, ...(groupId === undefined ? {} : { groupId }), duplicate: true })
    }
    if (plan.chance(rates.permanentFailure)) permanent.add(paymentId)
  }
  sends.sort((a, b) => a.at - b.at)
  stats.permanentPayments = permanent.size

  const groups = new Map<string, QueuedMessage[]>()
  const byId = new Map<string, QueuedMessage>()
  const oversized = new Set(sends.map((s) => s.paymentId).filter((id) => streamFor(seed, 'oversized', id).chance(rates.oversized)))
  stats.oversizedPayments = oversized.size
  const charge = gateway({ seed, rates, permanent, oversized, stats, byId, groups, ledger, clock, ...(orders === undefined ? {} : { orders }) })

  const connections: StoreConnection[] = []
  for (let i = 0; i < config.consumers; i++) {
    connections.push(site === undefined ? dynamoDBConnection(config.endpoint, (table as NonNullable<typeof table>).tableName, config.sdkMaxAttempts) : await site.connection())
  }
  const skews = streamFor(seed, 'skew')
  // Unclaimed records (transact-only) may settle without a request: the slow record waits for quiet instead.
  const shape = sqsShape(config.effects === 'transact-only' || config.handler === 'promises' ? 'idle' : 'settled')
  const offsets = connections.map(() => skews.int(-config.maxSkewMs, config.maxSkewMs))
  const processes = sharedProcesses(config, connections, offsets, { clock, options, counters, shape })
  const consumers = connections.map((connection, i) => new Consumer({
    id: `consumer-${i + 1}`,
    offsetMs: processes[i]?.offsetMs ?? offsets[i] as number,
    clock,
    connection,
    middy: config.middy,
    options,
    faults: { seed, rate: rates.storeFault },
    counters,
    charge,
    shape,
    handler: config.handler ?? 'perRecord',
    ...(processes[i] === undefined ? {} : { process: processes[i] })
  }))

  let nextSend = 0
  // The server's crashes and restarts strike while payments are first sent (the busiest time);
  // producer duplicates and redeliveries keep coming long after.
  const scheduled = site?.schedule(seed, startedAt, Math.max(startedAt, ...sends.filter((s) => !s.duplicate).map((s) => s.at)))
  const invocations = await runLambdaLoop<SQSRecord, Delivery>({
    seed, rates, clock, consumers, stats, ...(scheduled === undefined ? {} : { scheduled }),
    functionTimeoutMs: config.functionTimeoutMs, maxSkewMs: config.maxSkewMs, maxVirtualMs: config.maxVirtualMs,
    source: {
      produce: (now) => {
        while (nextSend < sends.length && (sends[nextSend]?.at ?? Infinity) <= now) {
          const send = sends[nextSend++] as (typeof sends)[number]
          const message = queue.send({ paymentId: send.paymentId, amount: send.amount }, now, send.groupId)
          byId.set(message.messageId, message)
          if (message.groupId !== undefined) groups.set(message.groupId, [...(groups.get(message.groupId) ?? []), message])
          stats.messages++
          if (send.duplicate) stats.producerDuplicates++
        }
        return sends[nextSend]?.at ?? Infinity
      },
      receive: (now) => queue.receive(now),
      nextReadyAt: (now) => queue.nextVisibleAt(now),
      drained: () => queue.drained(),
      // A rejected invocation (or a lost answer) deletes nothing: the whole batch comes back.
      settled: (delivery, answered) => { if (answered === undefined) queue.fail(delivery); else queue.settle(delivery, answered.response) },
      // A process that died answers nothing: its messages come back when their visibility times out.
      died: () => {}
    }
  })
  const items = site === undefined ? await (table as NonNullable<typeof table>).items() : await site.items()
  // Transact profile: the effects are what the orders table holds, whatever the functions believed.
  const ordersAudit = await orders?.audit()
  for (const effect of ordersAudit?.effects ?? []) ledger.charge(effect)
  for (const consumer of consumers) await consumer.close()
  await orders?.drop()
  await table?.drop()
  await site?.stop()
  const paymentOf = (body: string): string => (JSON.parse(body) as { paymentId: string }).paymentId
  const delivered: Delivered = {
    label: `${config.profile}: ${config.fifo ? 'FIFO' : 'standard'} queue, ${config.consumers} consumers, batches of ${config.batchSize}, ${config.middyName}` +
      (redis === undefined ? '' : `, Redis (persistence ${redis.persistence}, ${site?.restarts.length ?? 0} restarts)`),
    lost: queue.messages.filter((m) => m.state === 'deleted' && !ledger.applied(paymentOf(m.body))).map((m) => m.messageId),
    notDrained: queue.messages.filter((m) => m.state === 'available').map((m) => m.messageId),
    deadLettered: queue.deadLetters.length,
    answers: queue.answers
  }
  const server: ServerStats | undefined = site === undefined ? undefined : { restarts: site.restarts, outageRefusals: site.outageRefusals }
  return audit({ config, stats, delivered, ledger, invocations, consumers, items, counters, now: clock.now(), ...(ordersAudit === undefined ? {} : { orders: ordersAudit }), ...(server === undefined ? {} : { server }) })
}
