import { streamFor } from './prng.js'
import type { ChaosConfig } from './scenario.js'

/** One record a producer puts on a log (a Kinesis stream, a Kafka topic), and when. */
export interface Put { at: number, paymentId: string, amount: number, partitionKey: string, duplicate: boolean }

/**
 * What the producer of a log puts, and when: each payment once under its account's key, some
 * a second time later on (same data, same key), in time order; and the payments whose charge
 * always fails. Drawn from the seed alone.
 */
export const planPuts = (config: ChaosConfig, partitionKeys: number, startedAt: number): { puts: Put[], permanent: Set<string> } => {
  const { rates } = config
  const plan = streamFor(config.seed, 'producer')
  const puts: Put[] = []
  const permanent = new Set<string>()
  for (let i = 1; i <= config.payments; i++) {
    const payment = { at: startedAt + i * plan.int(0, 40), paymentId: `pay-${i}`, amount: plan.int(100, 99_999), partitionKey: `account-${plan.int(1, partitionKeys)}` }
    puts.push({ ...payment, duplicate: false })
    if (plan.chance(rates.producerDuplicate)) puts.push({ ...payment, at: payment.at + plan.int(0, config.duplicateWithinMs), duplicate: true })
    if (plan.chance(rates.permanentFailure)) permanent.add(payment.paymentId)
  }
  puts.sort((a, b) => a.at - b.at)
  return { puts, permanent }
}

/**
 * The `produce` step of a log's Lambda loop: puts every planned record whose time has come
 * (with `write`), counts it, and tells when the next one is due.
 */
export const producing = (puts: readonly Put[], write: (payment: { paymentId: string, amount: number }, partitionKey: string, now: number) => void, stats: { messages: number, producerDuplicates: number }): (now: number) => number => {
  let next = 0
  return (now) => {
    while (next < puts.length && (puts[next]?.at ?? Infinity) <= now) {
      const put = puts[next++] as Put
      write({ paymentId: put.paymentId, amount: put.amount }, put.partitionKey, now)
      stats.messages++
      if (put.duplicate) stats.producerDuplicates++
    }
    return puts[next]?.at ?? Infinity
  }
}
