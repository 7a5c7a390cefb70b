import { storedKey } from '../../src/keys/selector.js'
import { NAMESPACE } from './consumer.js'
import type { FaultCounters } from './store-faults.js'
import type { Invocation } from './invocation.js'
import { findDuplicates, type DuplicateEffect, type Forgot } from './duplicates.js'
import type { Ledger, OrderViolation } from './ledger.js'
import type { OrdersAudit } from './orders.js'
import type { ChaosConfig, RunStats, ServerStats } from './scenario.js'

export type { DuplicateCause, DuplicateEffect, DuplicateWindow } from './duplicates.js'

/** Why an IN_PROGRESS record is still there once the queue is drained (`store-forgot`: a restart brought back an older state of it). */
export type LeftoverCause = 'crashed-owner' | 'settle-fault' | 'completion-fault' | 'claim-answer-lost' | 'store-forgot' | 'timed-out' | 'unexplained'

export interface LeftoverLock { key: string, owner?: string, cause: LeftoverCause, leaseUntil: number, live: boolean, outlivesOwner: boolean }

/** What the event source says became of what was sent, in its own terms. */
export interface Delivered {
  /** The run in a few words: source, consumers, batch size, Middy major. */
  label: string
  /** Messages or records the source counts as done (deleted, checkpointed past) whose payment never took effect. */
  lost: string[]
  /** Still waiting in the source at the end. */
  notDrained: string[]
  /** Sent to a DLQ or an on-failure destination. */
  deadLettered: number
  /** Answers that reported failures, and answers Lambda could not read as JSON (it failed the whole batch). */
  answers: { partial: number, unreadable: number }
}

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
  /** Payments whose work made what cannot be stored (kept FAILED, dead-lettered). */
  oversizedPayments: number
  crashes: Record<string, number>
  /** Store faults injected, by `step:kind`. */
  faultsInjected: Record<string, number>
  /** Requests that still failed after the SDK's retries, by step. */
  faultsSurfaced: Record<string, number>
  effects: number
  duplicateEffects: DuplicateEffect[]
  lost: string[]
  notDrained: string[]
  deadLettered: number
  /** Answers that reported some records as failed, as Lambda read them. */
  partialAnswers: number
  /** Answers Lambda could not read (JSON it has no use for, an identifier not in the batch): the whole batch failed. */
  unreadableAnswers: number
  /** Records stored FAILED at the end (Kafka and streams release every failure: none). */
  storedFailed: number
  leftoverLocks: LeftoverLock[]
  orderViolations: OrderViolation[]
  /** Keys whose completion the store acknowledged, yet not COMPLETED in the table at the end. */
  completionsUndone: string[]
  /** Of those, the ones a restart of the store's server lost. */
  completionsForgotten: string[]
  /** Restarts of the store's server (Redis runs). */
  restarts: number
  /** Records whose state a restart did not keep (gone, older, or back after their deletion), summed over the restarts. */
  recordsForgotten: number
  /** Store requests that failed because the server was down. */
  outageRefusals: number
  /** Restarts whose kill found acknowledged writes in the server's AOF buffer, not yet written to the file. */
  killsWithAofUnwritten: number
  /** Commits refused by one of the user's `transact` conditions, by entry and code (transact profile). */
  refusedCommits: Record<string, number>
  virtualMs: number
  stuck: boolean
  /** Every broken invariant, in words. Empty when the run is clean. */
  violations: string[]
}

/** The store's server may forget what it acknowledged when it restarts (Redis without AOF `always`). */
export const storeMayForget = (config: ChaosConfig): boolean => config.store === 'redis' && config.redis?.persistence !== 'always'

const tally = <K extends string>(entries: Iterable<[K, number]>): Record<string, number> => Object.fromEntries([...entries].sort(([a], [b]) => a.localeCompare(b)))

/**
 * The invariants (what "effectively once" means here):
 * - a payment is charged at most once, except right after an effect whose completion
 *   never reached the store (a crash between effect and completion, or a completion
 *   fault that outlasted the SDK's retries): every extra charge must be explained so;
 * - every answer of the function is one Lambda can read, as the JSON it receives;
 * - no message is lost: each was charged, or dead-lettered; the queue drains (a stream: its
 *   shards are checkpointed to their end, and every record passed was charged or sent to the
 *   on-failure destination);
 * - no lock outlives its owner: past every deadline no IN_PROGRESS lease is live, and
 *   each one left behind belongs to an owner that crashed or could not settle it;
 * - order: a message of a FIFO group (a record of a stream's partition key) takes effect only
 *   after every earlier one of its group did (or was dead-lettered): checked at each effect;
 * - per-record settlement (DESIGN §3.8): every duplicate went through its own record's window
 *   (none through a batch-wide one), and a record acknowledged COMPLETED stays COMPLETED,
 *   whatever later became of its invocation (a crash or a timeout in the middle of its batch);
 * - transact profiles (DESIGN §3.9, `effects: 'transact-only'` too): no duplicate at all, and every transaction whole (the
 *   accounts' counters and balances add up to the payments in the table);
 * - a store whose server restarts (Redis): with AOF `always`, every invariant above, as on
 *   DynamoDB. Without persistence, or with AOF `everysec`, the server may lose acknowledged
 *   writes in a restart: a duplicate, an undone completion or a stale lock that such a loss
 *   explains (`store-forgot`, read from the server's records before and after) is reported,
 *   not a violation; anything it does not explain still is.
 */
export const audit = (input: {
  config: ChaosConfig
  stats: RunStats
  delivered: Delivered
  ledger: Ledger
  invocations: Map<string, Invocation>
  /** Each consumer's clock skew, by id. */
  consumers: ReadonlyArray<{ id: string, offsetMs: number }>
  items: Array<Record<string, unknown>>
  counters: FaultCounters
  now: number
  /** The orders table read back, in the transact profile. */
  orders?: OrdersAudit
  /** The store's server's restarts, when the run has one of its own (Redis). */
  server?: ServerStats
}): ChaosReport => {
  const { config, stats, delivered, ledger, invocations, consumers, items, counters, now, orders, server } = input
  const keyOf = (paymentId: string): string => storedKey(NAMESPACE, paymentId)
  const restarts = server?.restarts ?? []
  // What a restart lost, read from the server itself: its records just before the kill, and just after it came back.
  const forgot: Forgot = (key, token, by) => token !== undefined && restarts.some((r) => r.downAt <= by && r.changed.get(key)?.before?.token === token)
  const changedByRestart = (key: string): boolean => restarts.some((r) => r.changed.has(key))
  // Without AOF `always`, losing acknowledged writes in a restart is the server's documented
  // behaviour, not the middleware's doing: what it explains is reported, not a violation.
  const mayForget = storeMayForget(config)

  const duplicateEffects = findDuplicates(ledger, invocations, keyOf, forgot)

  const { lost, notDrained } = delivered

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
            : owner.claimAnswersLost.has(key) ? 'claim-answer-lost'
              : changedByRestart(key) ? 'store-forgot'
                : owner.timedOut.has(key) ? 'timed-out' : 'unexplained'
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

  const statusOf = new Map(items.map((item) => [String(item.idempotencyKey), item.status]))
  const completionsUndone = [...new Set([...invocations.values()].flatMap((i) => [...i.completed]))].filter((key) => statusOf.get(key) !== 'COMPLETED')
  const completionsForgotten = completionsUndone.filter(changedByRestart)
  const refusedCommits = tally([...invocations.values()].flatMap((i) => [...i.transactRefused.values()].map((r) => r.reason))
    .reduce((m, reason) => m.set(reason, (m.get(reason) ?? 0) + 1), new Map<string, number>()))

  const violations: string[] = []
  // A hand-written handler (the promises profile) completes its records together: the
  // batch-wide window is its documented limit, so a crash there is no violation; nothing else is.
  const batchWide = (d: DuplicateEffect): boolean => config.handler === 'promises' && d.cause === 'crash-between-effect-and-completion'
  const forgotten = (d: DuplicateEffect): boolean => mayForget && d.cause === 'store-forgot'
  const forbidden = duplicateEffects.filter((d) => (d.window === 'other' && !batchWide(d) && !forgotten(d)) || orders !== undefined)
  for (const d of forbidden) {
    violations.push(`payment ${d.paymentId} charged again by ${d.effect.invocationId} (message ${d.effect.messageId}) after ${d.after.invocationId} (message ${d.after.messageId}): ${d.cause}, ${d.window === 'other' ? 'not inside its record\'s own window' : 'in the transact profile'}`)
  }
  for (const key of completionsUndone) {
    if (mayForget && completionsForgotten.includes(key)) continue
    violations.push(`${key} was acknowledged COMPLETED but is ${String(statusOf.get(key) ?? 'absent')} at the end${completionsForgotten.includes(key) ? ' (a restart of the server lost it)' : ''}`)
  }
  if (orders !== undefined && (orders.accountPayments !== orders.effects.length || orders.accountBalance !== orders.paymentAmounts)) {
    violations.push(`a transaction was not whole: accounts count ${orders.accountPayments} payments of ${orders.accountBalance} in all, the table holds ${orders.effects.length} payments of ${orders.paymentAmounts}`)
  }
  if (delivered.answers.unreadable > 0) violations.push(`${delivered.answers.unreadable} answer(s) Lambda could not read: their whole batches failed`)
  if (lost.length > 0) violations.push(`${lost.length} message(s) deleted from the queue (or checkpointed past) without their payment taking effect: ${lost.slice(0, 10).join(', ')}`)
  if (stats.stuck || notDrained.length > 0) violations.push(`the source did not drain within ${config.maxVirtualMs} ms of virtual time: ${notDrained.slice(0, 10).join(', ')}`)
  for (const lock of leftoverLocks) {
    if (lock.live) violations.push(`live lock on ${lock.key} after every lease should have lapsed (until ${lock.leaseUntil})`)
    if (lock.outlivesOwner) violations.push(`lock on ${lock.key} outlives its owner ${lock.owner}'s deadline`)
    if (lock.cause === 'unexplained') violations.push(`lock on ${lock.key} left by ${lock.owner ?? 'an unknown owner'} with no crash or store fault to explain it`)
    if (lock.cause === 'store-forgot' && !mayForget) violations.push(`lock on ${lock.key} left by ${lock.owner ?? 'an unknown owner'}: a restart of the server brought back an older state of it`)
  }
  for (const v of ledger.orderViolations) {
    violations.push(`order broken in ${v.groupId}: ${v.messageId} (${v.paymentId}) took effect before ${v.overtaken.join(', ')}`)
  }

  return {
    seed: config.seed,
    profile: config.profile,
    label: delivered.label,
    messages: stats.messages,
    payments: config.payments,
    producerDuplicates: stats.producerDuplicates,
    deliveries: stats.deliveries,
    invocations: stats.invocations,
    lostAcks: stats.lostAcks,
    handlerThrows: stats.handlerThrows,
    transientFailures: stats.transientFailures,
    permanentPayments: stats.permanentPayments,
    oversizedPayments: stats.oversizedPayments,
    crashes: tally(stats.crashes),
    faultsInjected: tally(counters.injected),
    faultsSurfaced: tally(counters.surfaced),
    effects: ledger.effects.length,
    duplicateEffects,
    lost,
    notDrained,
    deadLettered: delivered.deadLettered,
    partialAnswers: delivered.answers.partial,
    unreadableAnswers: delivered.answers.unreadable,
    storedFailed: items.filter((item) => item.status === 'FAILED').length,
    leftoverLocks,
    orderViolations: ledger.orderViolations,
    completionsUndone,
    completionsForgotten,
    restarts: restarts.length,
    recordsForgotten: restarts.reduce((n, r) => n + r.changed.size, 0),
    outageRefusals: server?.outageRefusals ?? 0,
    killsWithAofUnwritten: restarts.filter((r) => r.aofUnwrittenBytes > 0).length,
    refusedCommits,
    virtualMs: stats.virtualMs,
    stuck: stats.stuck,
    violations
  }
}
