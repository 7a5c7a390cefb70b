import type { LifecycleConfig, Unit } from '../lifecycle/config.js'
import type { Lease } from '../lifecycle/lease.js'
import type { ClaimDecision } from '../lifecycle/outcome.js'
import type { OutcomeKind } from '../types.js'
import type { BatchSource } from '../sources/source.js'

/**
 * Where one record stands. `handed`: given to the handler, which may have run it (a
 * hand-written handler tells us only at the end). `running`: `perRecord` started it;
 * `settling`: its outcome is being written; `settled`: written. `not-started`: the batch closed before `perRecord` reached it.
 */
export type RecordPhase = 'handed' | 'running' | 'settling' | 'settled' | 'not-started'

/** One record of the batch and what became of it. */
export interface RecordState {
  record: unknown
  /** The record's `itemIdentifier` (an SQS messageId, a stream sequence number). */
  id: string
  /** Its ordering group, when the source keeps order. */
  group?: string
  /** Undefined when no key could be taken (the outcome then says why). */
  unit?: Unit
  /** `copy`: the same key earlier in this batch; it shares that record's result (docs/architecture.md: the batch flow, claim). */
  outcome?: ClaimDecision | { kind: 'copy', of: RecordState }
  phase?: RecordPhase
  /** For a record that ran: what it reports once settled, and what became of it. */
  result?: PromiseSettledResult<unknown>
  settledAs?: OutcomeKind
}

/** One batch, from claim to answer. */
export interface BatchState {
  source: BatchSource
  config: LifecycleConfig
  /** Most store requests at once (the `concurrency` option, or the store's own bound). */
  concurrency: number
  /**
   * Most records `perRecord` runs at once when it is given no bound of its own: the `concurrency`
   * option when set, else 50 — never a store's larger request bound, which says what the store
   * takes, not what the work downstream does.
   */
  recordConcurrency: number
  /** How close to the deadline a failure counts as a timeout (the `timeoutMarginMs` option). */
  timeoutMarginMs: number
  /** The event as Lambda delivered it, restored for outer middlewares. */
  event: object
  records: RecordState[]
  /** The claimed records, in the order the handler was given them. */
  run: RecordState[]
  lease: Lease
  context: unknown
  /** `perRecord` schedules this batch: a record it has not started has not run. */
  scheduled: boolean
  /** No record starts any more: Middy's timeout fired, or the handler or a middleware failed. */
  closed: boolean
  /** Middy's timeout fired: a record that fails from now on may have taken effect and keeps its lease. */
  timedOut: boolean
  /** `after` or `onError` has answered. */
  answered: boolean
  /** Something inside ours (the handler, a middleware) has read the handed event's `Records`. */
  recordsRead: boolean
  /** `perRecord` was called with this batch (whether it scheduled it or, given other records, ran them plainly). */
  handlerCalled?: true
}

/** The record a `run` or `copy` outcome finally stands for. */
export const primaryOf = (state: RecordState): RecordState =>
  state.outcome?.kind === 'copy' ? primaryOf(state.outcome.of) : state

// How `perRecord` finds the batch the middleware prepared: by the event the handler was
// given (a new object per invocation), or by the Lambda context should a middleware inside
// ours have replaced the event. A context shared by two live batches (tests reusing one) is
// ambiguous and found by event only.
const byEvent = new WeakMap<object, BatchState>()
const byContext = new WeakMap<object, BatchState | 'ambiguous'>()

export const registerBatch = (handed: object, batch: BatchState): void => {
  byEvent.set(handed, batch)
  if (typeof batch.context === 'object' && batch.context !== null) {
    byContext.set(batch.context, byContext.has(batch.context) ? 'ambiguous' : batch)
  }
}

export const forgetBatch = (batch: BatchState): void => {
  if (typeof batch.context === 'object' && batch.context !== null && byContext.get(batch.context) === batch) byContext.delete(batch.context)
}

export const findBatch = (event: unknown, context: unknown): BatchState | undefined => {
  const found = typeof event === 'object' && event !== null ? byEvent.get(event) : undefined
  if (found !== undefined) return found
  const viaContext = typeof context === 'object' && context !== null ? byContext.get(context) : undefined
  return viaContext === 'ambiguous' ? undefined : viaContext
}
