import type middy6 from '@middy/core'
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda'
import { freshTable } from '../support/dynamodb.js'
import { audit, type ChaosReport, type Delivered } from './audit.js'
import { Consumer, idempotencyOptions, sqsShape } from './consumer.js'
import { newFaultCounters } from './store-faults.js'
import type { Rates } from './fates.js'
import type { CrashPhase } from './invocation.js'
import { runLambdaLoop } from './lambda-loop.js'
import { Ledger } from './ledger.js'
import { OrdersTable } from './orders.js'
import { gateway } from './payments.js'
import { streamFor } from './prng.js'
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
  /** How the handler is written: `perRecord` (the default), or returning a promise per record (the promises profile). */
  handler?: 'perRecord' | 'promises'
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
  if (config.stream !== undefined) return await runStreamChaos(config, config.stream)
  const { seed, rates } = config
  const clock = new VirtualClock()
  const startedAt = clock.now()
  const table = await freshTable()
  const orders = config.effects === 'ledger' ? undefined : new OrdersTable(table.client)
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

  const skews = streamFor(seed, 'skew')
  const consumers = Array.from({ length: config.consumers }, (_, i) => new Consumer({
    id: `consumer-${i + 1}`,
    offsetMs: skews.int(-config.maxSkewMs, config.maxSkewMs),
    clock,
    endpoint: config.endpoint,
    tableName: table.tableName,
    middy: config.middy,
    options: idempotencyOptions(config, { key: 'body.paymentId' }),
    faults: { seed, rate: rates.storeFault },
    sdkMaxAttempts: config.sdkMaxAttempts,
    counters,
    charge,
    // Unclaimed records (transact-only) may settle without a request: the slow record waits for quiet instead.
    shape: sqsShape(config.effects === 'transact-only' || config.handler === 'promises' ? 'idle' : 'settled'),
    handler: config.handler ?? 'perRecord'
  }))

  let nextSend = 0
  const invocations = await runLambdaLoop<SQSRecord, Delivery>({
    seed, rates, clock, consumers, stats,
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
      settled: (delivery, answered) => { queue.settle(delivery, answered?.response as SQSBatchResponse | undefined) },
      // A process that died answers nothing: its messages come back when their visibility times out.
      died: () => {}
    }
  })
  const items = await table.items()
  // Transact profile: the effects are what the orders table holds, whatever the functions believed.
  const ordersAudit = await orders?.audit()
  for (const effect of ordersAudit?.effects ?? []) ledger.charge(effect)
  for (const consumer of consumers) consumer.destroy()
  await orders?.drop()
  await table.drop()
  const paymentOf = (body: string): string => (JSON.parse(body) as { paymentId: string }).paymentId
  const delivered: Delivered = {
    label: `${config.profile}: ${config.fifo ? 'FIFO' : 'standard'} queue, ${config.consumers} consumers, batches of ${config.batchSize}, ${config.middyName}`,
    lost: queue.messages.filter((m) => m.state === 'deleted' && !ledger.applied(paymentOf(m.body))).map((m) => m.messageId),
    notDrained: queue.messages.filter((m) => m.state === 'available').map((m) => m.messageId),
    deadLettered: queue.deadLetters.length
  }
  return audit({ config, stats, delivered, ledger, invocations, consumers, items, counters, now: clock.now(), ...(ordersAudit === undefined ? {} : { orders: ordersAudit }) })
}
