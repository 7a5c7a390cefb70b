import type { Unit } from '../unit/config.js'
import type { ClaimDecision } from '../unit/outcome.js'
import type { FailureDecision, OutcomeKind } from '../types.js'

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
  /** For a record that failed: what `onFailure` did with it. */
  onFailure?: FailureDecision
  /** When its work started (epoch ms), and how long it took until it was settled. */
  startedMs?: number
  durationMs?: number
}

/** The record a `run` or `copy` outcome finally stands for. */
export const primaryOf = (state: RecordState): RecordState =>
  state.outcome?.kind === 'copy' ? primaryOf(state.outcome.of) : state
