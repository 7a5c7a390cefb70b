import { storedKey } from '../../src/lifecycle/key.js'
import { NAMESPACE, type Consumer } from './consumer.js'
import type { FaultCounters } from './dynamodb-faults.js'
import type { Invocation } from './invocation.js'
import type { Effect, Ledger, OrderViolation } from './ledger.js'
import type { ChaosConfig, RunStats } from './scenario.js'
import type { SqsQueue } from './sqs-simulator.js'

/**
 * Why a payment took effect again. The first two are the physical limit of any
 * idempotency layer: the effect happened, and the proof of it never reached the store.
 */
export type DuplicateCause = 'crash-between-effect-and-completion' | 'completion-fault' | 'lease-taken-over' | 'unexplained'

/**
 * Which window a duplicate went through (issue 7). A duplicate follows an earlier effect E
 * of record K by invocation O, whose completion of K was never acknowledged. It is inside
 * **K's own window** when, at the moment O stopped (died, was killed, or gave up on the
 * completion), K itself was still between its effect and its acknowledgement: K's work was
 * still running, or K's completion request had been sent. It is **anything else** when K's
 * work had ended and its completion had not been sent (K was waiting for the rest of its
 * batch: the batch-wide window that per-record settlement closes), and for every cause that
 * is no window at all (a lease taken over, an unexplained duplicate).
 * A completion fault is always K's own window: its completion was sent and failed.
 */
export type DuplicateWindow = 'own-record' | 'other'

export interface DuplicateEffect { paymentId: string, effect: Effect, cause: DuplicateCause, window: DuplicateWindow, after: Effect }

const windowOf = (cause: DuplicateCause, owner: Invocation, key: string): DuplicateWindow => {
  switch (cause) {
    case 'completion-fault': return 'own-record'
    case 'crash-between-effect-and-completion':
      return owner.workDone.has(key) && !owner.completionSent.has(key) ? 'other' : 'own-record'
    default: return 'other'
  }
}

/** Why an IN_PROGRESS record is still there once the queue is drained. */
export type LeftoverCause = 'crashed-owner' | 'settle-fault' | 'completion-fault' | 'claim-answer-lost' | 'unexplained'

export interface LeftoverLock { key: string, owner?: string, cause: LeftoverCause, leaseUntil: number, live: boolean, outlivesOwner: boolean }

export interface ChaosReport {
  seed: number
  profile: string
  label: string
  messages: number
  payments: number
  producerDuplicates: number
  deliveries: number
  invocations: number
  lostAcks: number
  handlerThrows: number
  transientFailures: number
  permanentPayments: number
  crashes: Record<string, number>
  /** Failing attempts injected, by `step:kind`. */
  faultsInjected: Record<string, number>
  /** Requests that still failed after the SDK's retries, by step. */
  faultsSurfaced: Record<string, number>
  effects: number
  duplicateEffects: DuplicateEffect[]
  lost: string[]
  notDrained: string[]
  deadLettered: number
  leftoverLocks: LeftoverLock[]
  orderViolations: OrderViolation[]
  virtualMs: number
  stuck: boolean
  /** Every broken invariant, in words. Empty when the run is clean. */
  violations: string[]
}

const tally = <K extends string>(entries: Iterable<[K, number]>): Record<string, number> => Object.fromEntries([...entries].sort(([a], [b]) => a.localeCompare(b)))

/**
 * The invariants (what "effectively once" means here):
 * - a payment is charged at most once, except right after an effect whose completion
 *   never reached the store (a crash between effect and completion, or a completion
 *   fault that outlasted the SDK's retries): every extra charge must be explained so;
 * - no message is lost: each was charged, or dead-lettered; the queue drains;
 * - no lock outlives its owner: past every deadline no IN_PROGRESS lease is live, and
 *   each one left behind belongs to an owner that crashed or could not settle it;
 * - FIFO: a message takes effect only after every earlier message of its group did (or was dead-lettered).
 */
export const audit = (input: {
  config: ChaosConfig
  stats: RunStats
  queue: SqsQueue
  ledger: Ledger
  invocations: Map<string, Invocation>
  consumers: Consumer[]
  items: Array<Record<string, unknown>>
  counters: FaultCounters
  now: number
}): ChaosReport => {
  const { config, stats, queue, ledger, invocations, consumers, items, counters, now } = input
  const keyOf = (paymentId: string): string => storedKey(NAMESPACE, paymentId)

  const duplicateEffects: DuplicateEffect[] = []
  for (const [paymentId, effects] of ledger.byPayment) {
    const key = keyOf(paymentId)
    for (let i = 1; i < effects.length; i++) {
      const effect = effects[i] as Effect
      let found: DuplicateEffect | undefined
      // The nearest earlier effect whose completion never made it to the store explains this one.
      for (let j = i - 1; j >= 0 && found === undefined; j--) {
        const before = effects[j] as Effect
        const owner = invocations.get(before.invocationId) as Invocation
        if (owner.completed.has(key)) continue
        const cause: DuplicateCause | undefined = owner.dead
          ? 'crash-between-effect-and-completion'
          : owner.completionFaults.has(key) ? 'completion-fault' : owner.fencedOut.has(key) ? 'lease-taken-over' : undefined
        if (cause !== undefined) found = { paymentId, effect, cause, window: windowOf(cause, owner, key), after: before }
      }
      // Or this effect came from an owner whose lease another host had already taken (clock skew):
      // it charged, then its completion was refused by the fence.
      if (found === undefined && (invocations.get(effect.invocationId) as Invocation).fencedOut.has(key)) {
        found = { paymentId, effect, cause: 'lease-taken-over', window: 'other', after: effects[i - 1] as Effect }
      }
      duplicateEffects.push(found ?? { paymentId, effect, cause: 'unexplained', window: 'other', after: effects[i - 1] as Effect })
    }
  }

  const paymentOf = (body: string): string => (JSON.parse(body) as { paymentId: string }).paymentId
  const lost = queue.messages.filter((m) => m.state === 'deleted' && !ledger.applied(paymentOf(m.body))).map((m) => m.messageId)
  const notDrained = queue.messages.filter((m) => m.state === 'available').map((m) => m.messageId)

  const owners = new Map<string, Invocation>()
  for (const invocation of invocations.values()) for (const token of invocation.claimed.values()) owners.set(token, invocation)
  const skewOf = new Map(consumers.map((c) => [c.id, c.offsetMs]))
  const leftoverLocks: LeftoverLock[] = items.filter((item) => item.status === 'IN_PROGRESS').map((item) => {
    const key = String(item.idempotencyKey)
    const leaseUntil = Number(item.inProgressExpiry)
    const owner = owners.get(String(item.leaseToken))
    const cause: LeftoverCause = owner === undefined
      ? 'unexplained'
      : owner.dead ? 'crashed-owner'
        : owner.settleFaults.has(key) ? 'settle-fault'
          : owner.completionFaults.has(key) ? 'completion-fault'
            : owner.claimAnswersLost.has(key) ? 'claim-answer-lost' : 'unexplained'
    return {
      key,
      ...(owner === undefined ? {} : { owner: owner.id }),
      cause,
      leaseUntil,
      // Lapsed for every consumer, whatever its skew.
      live: leaseUntil + config.maxSkewMs >= now,
      // A lease ends at its owner's deadline, read on its owner's clock.
      outlivesOwner: owner !== undefined && leaseUntil > owner.deadline + (skewOf.get(owner.consumerId) ?? 0)
    }
  })

  const violations: string[] = []
  const unexplained = duplicateEffects.filter((d) => d.cause === 'unexplained' || d.cause === 'lease-taken-over')
  for (const d of unexplained) {
    violations.push(`payment ${d.paymentId} charged again by ${d.effect.invocationId} (message ${d.effect.messageId}) after ${d.after.invocationId} (message ${d.after.messageId}): ${d.cause}`)
  }
  if (lost.length > 0) violations.push(`${lost.length} message(s) deleted from the queue without their payment taking effect: ${lost.slice(0, 10).join(', ')}`)
  if (stats.stuck || notDrained.length > 0) violations.push(`the queue did not drain within ${config.maxVirtualMs} ms of virtual time: ${notDrained.slice(0, 10).join(', ')}`)
  for (const lock of leftoverLocks) {
    if (lock.live) violations.push(`live lock on ${lock.key} after every lease should have lapsed (until ${lock.leaseUntil})`)
    if (lock.outlivesOwner) violations.push(`lock on ${lock.key} outlives its owner ${lock.owner}'s deadline`)
    if (lock.cause === 'unexplained') violations.push(`lock on ${lock.key} left by ${lock.owner ?? 'an unknown owner'} with no crash or store fault to explain it`)
  }
  for (const v of ledger.orderViolations) {
    violations.push(`FIFO order broken in ${v.groupId}: ${v.messageId} (${v.paymentId}) took effect before ${v.overtaken.join(', ')}`)
  }

  return {
    seed: config.seed,
    profile: config.profile,
    label: `${config.profile}: ${config.fifo ? 'FIFO' : 'standard'} queue, ${config.consumers} consumers, batches of ${config.batchSize}, ${config.middyName}`,
    messages: stats.messages,
    payments: config.payments,
    producerDuplicates: stats.producerDuplicates,
    deliveries: stats.deliveries,
    invocations: stats.invocations,
    lostAcks: stats.lostAcks,
    handlerThrows: stats.handlerThrows,
    transientFailures: stats.transientFailures,
    permanentPayments: stats.permanentPayments,
    crashes: tally(stats.crashes),
    faultsInjected: tally(counters.injected),
    faultsSurfaced: tally(counters.surfaced),
    effects: ledger.effects.length,
    duplicateEffects,
    lost,
    notDrained,
    deadLettered: queue.deadLetters.length,
    leftoverLocks,
    orderViolations: ledger.orderViolations,
    virtualMs: stats.virtualMs,
    stuck: stats.stuck,
    violations
  }
}
