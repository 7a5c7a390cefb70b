import { resultOf } from './answer.js'
import { primaryOf, type RecordState } from './record-state.js'

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
