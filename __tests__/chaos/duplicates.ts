import type { Invocation } from './invocation.js'
import type { Effect, Ledger } from './ledger.js'

/**
 * Why a payment took effect again. The first two are the physical limit of any
 * idempotency layer: the effect happened, and the proof of it never reached the store.
 * `store-forgot`: the proof had reached the store (or the claim had), and a restart of the
 * store's server lost it: no idempotency layer can keep what its store forgets (Redis without
 * persistence, or with AOF that lost its last writes).
 */
export type DuplicateCause = 'crash-between-effect-and-completion' | 'completion-fault' | 'store-forgot' | 'lease-taken-over' | 'refused-by-condition' | 'unexplained'

/**
 * Whether a restart of the store's server, by virtual time `by`, lost the record of `key` that
 * was written under `token` (its claim, or the completion or failure that followed it).
 */
export type Forgot = (key: string, token: string | undefined, by: number) => boolean
const forgotNothing: Forgot = () => false

/**
 * Which window a duplicate went through (issue 7). A duplicate follows an earlier effect E
 * of record K by invocation O, whose completion of K was never acknowledged. It is inside
 * **K's own window** when, at the moment O stopped (died, was killed, or gave up on the
 * completion), K itself was still between its effect and its acknowledgement: K's work was
 * still running, or K's completion request had been sent. It is **anything else** when K's
 * work had ended and its completion had not been sent (K was waiting for the rest of its
 * batch: the batch-wide window that per-record settlement closes), and for every cause that
 * is no window at all (a lease taken over, an unexplained duplicate).
 * A completion fault is always K's own window: its completion was sent and failed. A record the
 * store forgot went through no window of the middleware's: it counts as anything else.
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

/**
 * Every effect beyond a payment's first, with what explains it. In the transact profile a
 * payment cannot take effect twice in the table (its Put is guarded by `attribute_not_exists`):
 * a second execution that reached the commit shows instead as a commit refused by that
 * condition ('refused-by-condition'), and counts here as the duplicate it would have been.
 */
export const findDuplicates = (ledger: Ledger, invocations: ReadonlyMap<string, Invocation>, keyOf: (paymentId: string) => string, forgot: Forgot = forgotNothing): DuplicateEffect[] => {
  const duplicateEffects: DuplicateEffect[] = []
  for (const [paymentId, effects] of ledger.byPayment) {
    const key = keyOf(paymentId)
    for (let i = 1; i < effects.length; i++) {
      const effect = effects[i] as Effect
      let found: DuplicateEffect | undefined
      // The nearest earlier effect whose completion never made it to the store explains this one,
      // or whose record (its claim, its completion) the store forgot in a restart before this effect.
      for (let j = i - 1; j >= 0 && found === undefined; j--) {
        const before = effects[j] as Effect
        const owner = invocations.get(before.invocationId) as Invocation
        const forgotten = forgot(key, owner.claimed.get(key), effect.at)
        if (owner.completed.has(key) && !forgotten) continue
        const cause: DuplicateCause | undefined = owner.completed.has(key)
          ? 'store-forgot'
          : owner.dead
            ? 'crash-between-effect-and-completion'
            : owner.completionFaults.has(key) ? 'completion-fault' : forgotten ? 'store-forgot' : owner.fencedOut.has(key) ? 'lease-taken-over' : undefined
        if (cause !== undefined) found = { paymentId, effect, cause, window: windowOf(cause, owner, key), after: before }
      }
      // Or this effect came from an owner whose lease another host had already taken (clock skew),
      // or that the store forgot (a restart): it charged, then its completion was refused by the fence.
      const own = invocations.get(effect.invocationId) as Invocation
      if (found === undefined && own.fencedOut.has(key)) {
        found = { paymentId, effect, cause: forgot(key, own.claimed.get(key), effect.at) ? 'store-forgot' : 'lease-taken-over', window: 'other', after: effects[i - 1] as Effect }
      }
      duplicateEffects.push(found ?? { paymentId, effect, cause: 'unexplained', window: 'other', after: effects[i - 1] as Effect })
    }
  }
  for (const invocation of invocations.values()) {
    for (const [key, { reason, messageId }] of invocation.transactRefused) {
      // Entry 0 is the payment's Put: refused because the payment was already applied.
      if (!reason.startsWith('entry 0 ConditionalCheckFailed')) continue
      const paymentId = [...ledger.byPayment.keys()].find((p) => keyOf(p) === key) ?? key
      const first = ledger.byPayment.get(paymentId)?.[0]
      const attempt: Effect = { paymentId, messageId: messageId ?? 'unknown', sequence: -1, invocationId: invocation.id, consumerId: invocation.consumerId, at: -1 }
      duplicateEffects.push({ paymentId, effect: attempt, cause: 'refused-by-condition', window: 'other', after: first ?? attempt })
    }
  }
  return duplicateEffects
}
