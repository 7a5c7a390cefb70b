import { prepareUnit, type Selection } from '../keys/prepare.js'
import { kindOfRefusal, reportOutcome } from '../observe/report.js'
import { claim } from './claim.js'
import type { LifecycleConfig, Unit } from './config.js'
import { storeDeadline, withDeadline } from './deadline.js'
import type { Lease } from './lease.js'
import { settleUnit } from './settle.js'

/**
 * The life of one whole event (docs/architecture.md: whole events and HTTP), written once for
 * its two callers: the middleware's hooks (`middleware/event-hooks.ts`), which split it between
 * `before` and `after`/`onError`, and `makeIdempotent` (`wrap/make-idempotent.ts`), which runs it
 * around one call. Each caller brings what differs: where the key is read, how the lease is
 * measured, how a timeout is recognised, and what a refusal or a replay becomes for its caller.
 */

/** One whole event (or one call of a wrapped function), as its caller sees it. */
export interface WholeEvent {
  /** What the key and the payload are read from: the event, or the wrapped function's arguments. */
  input: unknown
  /** The Lambda context (or a durable context holding one), if any: its tenant scopes the key, its deadline bounds the store calls. */
  context: unknown
  /** Names the event in errors: `event`, `charge call`. */
  label: string
  lease: Lease
  /** Store calls end this long before the invocation's deadline (the `timeoutMarginMs` option). */
  timeoutMarginMs: number
}

/** A whole event claimed for us, whose work runs: what settling it needs. */
export interface RunningEvent {
  unit: Unit
  leaseToken: string
  /** Settled: its `transact` takes no more writes, and a hook that comes after another (`onError` after `after`) does nothing. */
  settled: boolean
  /** The `transact` writes its work queued; they commit with its completion. */
  writes: unknown[]
  startedMs: number
  /** The lifecycle, its store calls bounded by this invocation's deadline. */
  config: LifecycleConfig
}

/** What the claim made of a whole event, already reported to `onOutcome` and the log unless it runs. */
export type Admission =
  | { kind: 'run', event: RunningEvent }
  | { kind: 'replay', key: string, response: unknown }
  /** No key, in progress elsewhere, FAILED before, another payload, a store fault: the error says which. */
  | { kind: 'refused', error: unknown }

/**
 * Prepares the event's key (before the work can change its input), then claims it, with every
 * store call bounded by the invocation's deadline (docs/architecture.md: a store that hangs).
 */
export const admitWholeEvent = async (config: LifecycleConfig, selection: Selection, event: WholeEvent): Promise<Admission> => {
  const since = (): number => config.now() - event.lease.nowMs
  let unit: Unit
  try {
    unit = prepareUnit(selection, event.input, event.context, 1, event.label)
  } catch (error) {
    reportOutcome(config, { kind: 'no-key', durationMs: since(), error })
    return { kind: 'refused', error }
  }
  const bounded = withDeadline(config, storeDeadline(event.context, event.timeoutMarginMs))
  const decision = await claim(bounded, unit, event.lease)
  if (decision.kind === 'rejected') {
    reportOutcome(config, { kind: kindOfRefusal(decision.error), key: unit.key, durationMs: since(), error: decision.error })
    return { kind: 'refused', error: decision.error }
  }
  if (decision.kind === 'replay') {
    reportOutcome(config, { kind: 'replayed', key: unit.key, durationMs: since() })
    return { kind: 'replay', key: unit.key, response: decision.response }
  }
  const running: RunningEvent = { unit, leaseToken: decision.leaseToken, settled: false, writes: [], startedMs: config.now(), config: bounded }
  return { kind: 'run', event: running }
}

/**
 * Settles the event once its work has ended (the one settlement path, `settleUnit`), then
 * reports what became of it. `timedOut` is asked only of a failure: whether it came at the
 * invocation's deadline, when a request of the work may be out and the lease must be kept.
 * Answers the result the caller gives back (a fulfilled work whose completion failed is a
 * rejection). Called once per event: the caller checks `settled` first.
 */
export const settleWholeEvent = async (event: RunningEvent, result: PromiseSettledResult<unknown>,
  timedOut: () => boolean): Promise<PromiseSettledResult<unknown>> => {
  event.settled = true
  const nearDeadline = result.status === 'rejected' && timedOut()
  const { config, unit } = event
  const settled = await settleUnit(config, unit, event, result, { writes: event.writes, timedOut: nearDeadline })
  reportOutcome(config, {
    kind: settled.kind, key: unit.key, durationMs: config.now() - event.startedMs,
    ...(settled.onFailure === undefined ? {} : { onFailure: settled.onFailure }),
    ...(settled.result.status === 'rejected' ? { error: settled.result.reason } : {})
  })
  return settled.result
}
