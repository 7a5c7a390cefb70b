import { prepareUnit, type Selection, type Unit } from '../keys/prepare.js'
import { kindOfRefusal, reportOutcome } from '../observe/log.js'
import { claim } from './claim.js'
import type { LifecycleConfig } from './config.js'
import { storeDeadline, withDeadline } from './deadline.js'
import type { Lease } from './deadline.js'
import type { Settlement } from './outcome.js'
import { settleUnit } from './settle.js'

/**
 * The life of one whole event (docs/architecture.md: whole events and HTTP), written once for
 * its two callers: the middleware's hooks (`middleware/event-hooks.ts`), which split it between
 * `before` and `after`/`onError`, and `makeIdempotent` (`wrap/make-idempotent.ts`), which runs it
 * around one call. Each caller brings what differs: where the key is read, how the lease is
 * measured, how a timeout is recognised, and what a refusal or a replay becomes for its caller.
 */

/** A whole event claimed for us, whose work runs: what settling it needs. */
export interface RunningEvent {
  kind: 'run'
  unit: Unit
  leaseToken: string
  /** Settled: its `transact` takes no more writes; a later hook (`onError` after `after`) does nothing. */
  settled: boolean
  /** The `transact` writes its work queued; they commit with its completion. */
  writes: unknown[]
  startedMs: number
  /** The lifecycle, its store calls bounded by this invocation's deadline. */
  config: LifecycleConfig
}

/** How the work ended, or how its settlement did. */
type Settled = PromiseSettledResult<unknown>

/** What the claim made of a whole event: run it, or replay its stored response (already reported). */
export type Admission = RunningEvent | { kind: 'replay', key: string, response: unknown }

/** The whole-event lifecycle of one middleware, or of one wrapped function. */
export interface WholeEventLifecycle {
  /**
   * Prepares the event's key from `input` (the event, or the wrapped function's arguments) before
   * the work can change it, then claims it under `lease`. `context`: the Lambda context (or a
   * durable context holding one), if any; its tenant scopes the key, and its deadline bounds every
   * store call (docs/architecture.md: a store that hangs). An event that cannot run (no key, in
   * progress elsewhere, FAILED before, another payload, a store fault) rejects with the error
   * saying which, once reported.
   */
  admit: (input: unknown, context: unknown, lease: Lease) => Promise<Admission>
  /**
   * Settles the event once its work has ended (the one settlement path, `settleUnit`), then
   * reports what became of it. `timedOut` is asked only of a failure: whether it came at the
   * invocation's deadline, when a request of the work may be out and the lease must be kept.
   * Answers what became of it: `result`, what the caller gives back (a fulfilled work whose
   * completion failed is a rejection), and `onFailure: 'fail'` when the record is kept FAILED.
   * Called once per event: the caller checks `settled` first.
   */
  settle: (event: RunningEvent, result: Settled, timedOut: () => boolean) => Promise<Settlement>
}

/**
 * The lifecycle of the whole events of one caller. `label` names the event in errors (`event`,
 * `charge call`); `timeoutMarginMs`: store calls end this long before the invocation's deadline.
 */
export const wholeEventLifecycle = (
  config: LifecycleConfig, selection: Selection, label: string, timeoutMarginMs: number
): WholeEventLifecycle => ({
  admit: async (input, context, lease) => {
    const since = (): number => config.now() - lease.nowMs
    let unit: Unit
    try {
      unit = prepareUnit(selection, input, context, 1, label)
    } catch (error) {
      reportOutcome(config, { kind: 'no-key', durationMs: since(), error })
      throw error
    }
    const bounded = withDeadline(config, storeDeadline(context, timeoutMarginMs))
    const decision = await claim(bounded, unit, lease)
    const { key } = unit
    if (decision.kind === 'rejected') {
      const { error } = decision
      reportOutcome(config, { kind: kindOfRefusal(error), key, durationMs: since(), error })
      throw error
    }
    if (decision.kind === 'replay') {
      reportOutcome(config, { kind: 'replayed', key, durationMs: since() })
      return { kind: 'replay', key, response: decision.response }
    }
    const { leaseToken } = decision
    return { kind: 'run', unit, leaseToken, settled: false, writes: [], startedMs: config.now(), config: bounded }
  },

  settle: async (event, result, timedOut) => {
    event.settled = true
    const nearDeadline = result.status === 'rejected' && timedOut()
    const { unit } = event
    const how = { writes: event.writes, timedOut: nearDeadline }
    const settled = await settleUnit(event.config, unit, event, result, how)
    reportOutcome(config, {
      kind: settled.kind, key: unit.key, durationMs: config.now() - event.startedMs,
      ...(settled.onFailure === undefined ? {} : { onFailure: settled.onFailure }),
      ...(settled.result.status === 'rejected' ? { error: settled.result.reason } : {})
    })
    return settled
  }
})
