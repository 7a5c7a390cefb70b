import { IdempotencyError } from '../errors.js'
import type { Unit } from '../keys/prepare.js'
import { rejected, type ClaimDecision, type Hold } from '../lifecycle/outcome.js'
import type { FailureDecision, OutcomeKind } from '../types.js'

/**
 * Where a claimed record stands. `pending`: not handed yet. `handed`: given to the handler, which
 * may have run it (a hand-written handler tells us only at the end). `running`: `perRecord`
 * started it; `settling`: its outcome is being written; `settled`: written. `not-started`: the
 * batch closed before `perRecord` reached it.
 */
export type RecordPhase = 'pending' | 'handed' | 'running' | 'settling' | 'settled' | 'not-started'

/**
 * What became of a record's claim (docs/architecture.md: the batch flow, claim): one of
 * - `unkeyed`: no key could be taken; `error` says why;
 * - `keyed`: its key is taken and its claim not decided yet;
 * - `claimed`: it runs, holding `hold`, and goes through its phases (`Settled` once written);
 * - `decided`: decided without running (a stored result replayed, or refused: in progress
 *   elsewhere, FAILED before, payload mismatch, held back, store fault);
 * - `copy`: the same key earlier in this batch; it shares that record's result.
 * Each is a value: its `Batch` replaces it as the record moves on, never edits it.
 */
export type Fate = Unkeyed | Keyed | Claimed | Settled | Decided | Copy

export interface Unkeyed { readonly kind: 'unkeyed', readonly error: IdempotencyError }
export interface Keyed { readonly kind: 'keyed', readonly unit: Unit }
export interface Decided {
  readonly kind: 'decided'
  readonly unit: Unit
  readonly decision: Exclude<ClaimDecision, { kind: 'run' }>
}
export interface Copy { readonly kind: 'copy', readonly unit: Unit, readonly of: RecordState }

/** A claimed record before its outcome is written. `startedMs`: when its work started (epoch ms). */
export interface Claimed {
  readonly kind: 'claimed'
  readonly unit: Unit
  readonly hold: Hold
  readonly phase: Exclude<RecordPhase, 'settled'>
  readonly startedMs?: number
}

/**
 * A claimed record whose outcome is written: what it reports, what it became, and (for a failure)
 * what `onFailure` did.
 */
export interface Settled extends Omit<Claimed, 'phase'> {
  readonly phase: 'settled'
  readonly result: PromiseSettledResult<unknown>
  readonly settledAs: OutcomeKind
  readonly onFailure?: FailureDecision
  /** How long it took until it was settled, when its start is known. */
  readonly durationMs?: number
}

/**
 * One record of the batch and what became of it. Read-only here: the `Batch` it belongs to
 * alone moves its `fate` on (batch.ts), so where a record is claimed, settled and answered is
 * found in one place.
 */
export interface RecordState {
  readonly record: unknown
  /** The record's `itemIdentifier` (an SQS messageId, a stream sequence number). */
  readonly id: string
  /** Its ordering group, when the source keeps order. */
  readonly group?: string
  readonly fate: Fate
}

/** A record that was claimed: it stays claimed, only its phase moves on. */
export interface ClaimedRecord extends RecordState { readonly fate: Claimed | Settled }

/** A record as prepared, before its batch claims it: keyed, or not. */
export interface PreparedRecord extends RecordState { readonly fate: Unkeyed | Keyed }

/** A prepared record: keyed when `unit` could be taken, else unkeyed by `error`. */
export const preparedRecord = (
  record: unknown, id: string, group: string | undefined, taken: { unit: Unit } | { error: IdempotencyError }
): PreparedRecord => ({
  record,
  id,
  ...(group === undefined ? {} : { group }),
  fate: 'unit' in taken ? { kind: 'keyed', unit: taken.unit } : { kind: 'unkeyed', error: taken.error }
})

export const isClaimed = (state: RecordState): state is ClaimedRecord => state.fate.kind === 'claimed'

/** It cannot run: no key could be taken, or its claim was refused. */
export const refused = (state: RecordState): boolean =>
  state.fate.kind === 'unkeyed' || (state.fate.kind === 'decided' && state.fate.decision.kind === 'rejected')

/** What a claimed record settled as, once it has. */
export const settledOf = ({ fate }: RecordState): Settled | undefined =>
  fate.kind === 'claimed' && fate.phase === 'settled' ? fate : undefined

/** Its unit, unless no key could be taken. */
export const unitOf = (state: RecordState): Unit | undefined =>
  state.fate.kind === 'unkeyed' ? undefined : state.fate.unit

/** The record a claimed record or a copy finally stands for. */
export const primaryOf = (state: RecordState): RecordState =>
  state.fate.kind === 'copy' ? primaryOf(state.fate.of) : state

/**
 * Where the batch stands. `open`: records may start. `closed`: none starts any more (the handler
 * or a middleware failed). `timed-out`: Middy's timeout fired, and a record that fails from now on
 * may have taken effect. `answered`: `after` or `onError` has answered; nothing changes any more.
 */
export type BatchStage = 'open' | 'closed' | 'timed-out' | 'answered'

/** A record as its batch holds it: the one place its `fate` is written. */
export interface Slot extends RecordState { fate: Fate }

/**
 * The copies `perRecord` runs in their own ordering group's order while their original, in
 * another group, runs in this batch: each waits for its original to end, so that its group goes
 * on, or stops behind it, as if the copy had run. A copy waits only for a record earlier in the
 * batch than itself (see claim-batch.ts), so no two records ever wait for each other.
 */
export class Followers {
  readonly #waiting = new Map<RecordState, Array<() => void>>()

  /** Whether `state` is such a copy. */
  static follows (state: RecordState): boolean {
    const original = primaryOf(state)
    return state.group !== undefined && state.fate.kind === 'copy' && original.fate.kind === 'claimed' &&
      original.group !== state.group
  }

  /** Waits for the copy's original to end (settled, or never started); true when it succeeded. */
  async follow (copy: RecordState): Promise<boolean> {
    const original = primaryOf(copy)
    const { fate } = original
    if (fate.kind === 'claimed' && fate.phase !== 'settled' && fate.phase !== 'not-started') {
      await new Promise<void>((resolve) => {
        const waiting = this.#waiting.get(original) ?? []
        waiting.push(resolve)
        this.#waiting.set(original, waiting)
      })
    }
    return resultOf(copy).status === 'fulfilled'
  }

  /** `state` is settled, or will not start: the copies following it go on. */
  ended (state: RecordState): void {
    const waiting = this.#waiting.get(state)
    if (waiting === undefined) return
    this.#waiting.delete(state)
    for (const wake of waiting) wake()
  }
}

/** What a record answers: its own settled result, its original's for a copy, its refusal, or its stored replay. */
export const resultOf = (state: RecordState): PromiseSettledResult<unknown> => {
  const { fate } = state
  switch (fate.kind) {
    case 'copy': return resultOf(fate.of)
    case 'decided':
      return fate.decision.kind === 'replay'
        ? { status: 'fulfilled', value: fate.decision.response }
        : rejected(fate.decision.error)
    case 'unkeyed': return rejected(fate.error)
    case 'claimed':
      return fate.phase === 'settled'
        ? fate.result
        : rejected(new IdempotencyError(
            `${state.id} was claimed but had not settled when the batch was answered (timed out)`,
            { key: fate.unit.key }))
    case 'keyed': return rejected(new IdempotencyError(`${state.id} was never claimed`))
  }
}
