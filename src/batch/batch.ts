import { IdempotencyConfigError, IdempotencyError } from '../errors.js'
import type { LifecycleConfig } from '../lifecycle/config.js'
import { deadlineWithin, watchAbort, type Lease } from '../lifecycle/deadline.js'
import { rejected, type ClaimDecision, type Settlement } from '../lifecycle/outcome.js'
import { settleUnit, type SettleContext } from '../lifecycle/settle.js'
import type { BatchSource } from '../sources/source.js'
import { answerBatch, reportBatch, type AnswerForm } from './answer.js'
import {
  Followers, isClaimed, unitOf,
  type BatchStage, type ClaimedRecord, type Fate, type PreparedRecord, type RecordState, type Slot
} from './record-state.js'
import { Bound, forEachBounded, heldBackError } from './schedule.js'
import type { BatchLimits } from './limits.js'

/**
 * One batch, from claim to answer (docs/architecture.md: the batch flow). It alone changes its
 * records and its own flags, through the events below (claim decided, handed, read, called,
 * begun, skipped, settled, closed, answered); every other module reads them. A record's `fate`
 * is a value replaced at each step, so a reader never sees half of one.
 */
export class Batch {
  /** Its records, in delivery order. */
  readonly records: readonly RecordState[]
  readonly #slots = new Map<RecordState, Slot>()
  #run: readonly ClaimedRecord[] = []
  #recordsRead = false
  #handlerCalled = false
  #handed?: object
  #decidedMs?: number
  #stage: BatchStage = 'open'
  #startedBy?: 'perRecord'
  /**
   * Aborts when this batch's own deadline comes: the `signal` each record is given. Never Middy's
   * signal itself, which Middy 5 and 6 share between every invocation of the process (see watchAbort).
   */
  readonly #deadline = new AbortController()
  /** Copies waiting, in their group's order, for their original in another group to end. */
  readonly followers = new Followers()
  /** The batch's settlements in flight, within the store's bound whoever starts them. */
  readonly #storeRequests: Bound

  constructor (
    readonly source: BatchSource,
    readonly config: LifecycleConfig,
    readonly limits: BatchLimits,
    /** The event as Lambda delivered it, restored for outer middlewares. */
    readonly event: object,
    prepared: readonly PreparedRecord[],
    readonly lease: Lease,
    readonly context: unknown,
    /**
     * Told when `perRecord` takes the batch over: the middleware learns its handler (HandlerKind,
     * middleware/batch-hooks.ts).
     */
    private readonly whenStarted?: () => void
  ) {
    this.#storeRequests = new Bound(limits.maxStoreRequests)
    // Copies of the prepared records: no one else holds a record it could write.
    const slots = prepared.map((state): Slot => ({ ...state }))
    for (const slot of slots) this.#slots.set(slot, slot)
    this.records = slots
  }

  /** The claimed records, in the order the handler is given them. */
  get run (): readonly ClaimedRecord[] { return this.#run }
  /** Something inside ours (the handler, a middleware) has read the handed event's records. */
  get recordsRead (): boolean { return this.#recordsRead }
  /**
   * `perRecord` was called with this batch (whether it scheduled it or, given other records, ran them
   * plainly).
   */
  get handlerCalled (): boolean { return this.#handlerCalled }
  /** The event the handler is given (handover.ts). */
  get handed (): object | undefined { return this.#handed }
  /**
   * When the claims were decided (epoch ms): the records that did not run took this long from
   * `lease.nowMs`.
   */
  get decidedMs (): number | undefined { return this.#decidedMs }
  /** `perRecord` schedules this batch: a record it has not started has not run. */
  get scheduled (): boolean { return this.#startedBy !== undefined }
  /** No record starts any more. */
  get closed (): boolean { return this.#stage !== 'open' }
  get timedOut (): boolean { return this.#stage === 'timed-out' }
  get answered (): boolean { return this.#stage === 'answered' }
  /**
   * What a record's work is given as `signal`: aborted when this batch's own deadline comes, never
   * another invocation's.
   */
  get signal (): AbortSignal { return this.#deadline.signal }

  /**
   * The claim of a keyed record is decided (claim-batch.ts): it runs, it does not, or it is a copy of
   * `of`.
   */
  claimDecided (state: RecordState, decision: ClaimDecision | { kind: 'copy', of: RecordState }): void {
    const unit = unitOf(state)
    if (unit === undefined) throw new IdempotencyError(`${state.id} has no key: it cannot be claimed`)
    this.#become(state, decision.kind === 'run'
      ? { kind: 'claimed', unit, hold: decision, phase: 'pending' }
      : decision.kind === 'copy' ? { kind: 'copy', unit, of: decision.of } : { kind: 'decided', unit, decision })
  }

  /** The claimed records are handed to the handler, as `handed` (handover.ts). */
  hand (): void {
    this.#decidedMs = this.config.now()
    for (const state of this.records) {
      if (state.fate.kind === 'claimed') this.#become(state, { ...state.fate, phase: 'handed' })
    }
    this.#run = this.records.filter(isClaimed)
  }

  /** The event the handler is given, whose records it reads through `recordsWereRead`. */
  handedAs (event: object): void { this.#handed = event }
  recordsWereRead (): void { this.#recordsRead = true }
  handlerWasCalled (): void { this.#handlerCalled = true }

  /**
   * `perRecord` takes the batch over, listening to Middy's signal for the timeout; it calls the
   * returned function once it has run or skipped every record.
   */
  start (signal: AbortSignal): () => void {
    if (this.scheduled) {
      throw new IdempotencyConfigError('perRecord was called twice on one batch: its records would run twice')
    }
    this.#startedBy = 'perRecord'
    this.whenStarted?.()
    return watchAbort(signal, this.context, this.limits.timeoutMarginMs, (reason) => { this.close(true, reason) })
  }

  /** A record's work starts. */
  begin (state: ClaimedRecord): void {
    this.#become(state, { ...state.fate, phase: 'running', startedMs: this.config.now() })
  }

  /** No record starts any more. `timedOut`: because the deadline came. */
  close (timedOut: boolean, reason?: unknown): void {
    if (this.#stage === 'answered') return
    if (timedOut) {
      this.#stage = 'timed-out'
      if (!this.#deadline.signal.aborted) this.#deadline.abort(reason)
    } else if (this.#stage === 'open') this.#stage = 'closed'
  }

  /**
   * A record `perRecord` will not start: held back behind its ordering group's failure (released
   * now), or left when the batch closed (released by `closeOnTimeout` before the answer).
   */
  async skip (state: RecordState, why: 'held-back' | 'closed'): Promise<PromiseRejectedResult> {
    const group = state.group === undefined ? {} : { group: state.group }
    const error = heldBackError(why, { key: unitOf(state)?.key, ...group })
    const fate = state.fate
    if (fate.kind === 'copy') {
      // A copy following its original (see Followers, record-state.ts) that its group never reached: it did not take
      // its original's result.
      this.#become(state, { kind: 'decided', unit: fate.unit, decision: { kind: 'rejected', error } })
      return rejected(error)
    }
    if (why === 'closed') {
      if (isClaimed(state) && state.fate.phase === 'handed') this.notStarted(state)
      this.followers.ended(state)
    } else {
      await this.settle(state, rejected(error))
    }
    return rejected(error)
  }

  /**
   * Writes what became of one claimed record, the moment it is known; each record once. The
   * writes of every record of the batch share the store's bound (`limits.maxStoreRequests`):
   * `writing` is told when this one's turn has come (at once while the store has room).
   */
  async settle (
    state: RecordState,
    result: PromiseSettledResult<unknown>,
    writes: readonly unknown[] = [],
    writing?: () => void
  ): Promise<void> {
    await this.#settleThrough(state, result, { writes }, async (write) => await this.#storeRequests.run(write, writing))
  }

  /**
   * Settles a record the batch closes on (a timeout, an error: close.ts) at once, not in line behind
   * the completions of records whose work has ended: the answer must reach Lambda before its deadline.
   */
  async settleAtOnce (state: RecordState, result: PromiseRejectedResult): Promise<void> {
    await this.#settleThrough(state, result, {}, async (write) => await write())
  }

  /**
   * A claimed record `perRecord` was not given (a middleware inside ours dropped or replaced it):
   * it never ran, so it is released whatever `onFailure` says, and fails with `error`.
   */
  async release (state: RecordState, error: Error): Promise<void> {
    await this.#settleThrough(state, rejected(error), { attempted: false },
      async (write) => await this.#storeRequests.run(write))
  }

  /**
   * A claimed record kept FAILED, whatever `onFailure` says, because the handler's answer cannot
   * be read: it may have taken effect (close.ts).
   */
  async keepFailed (state: RecordState, error: unknown): Promise<void> {
    await this.#settleThrough(state, rejected(error), { keepFailed: true }, async (write) => await write())
  }

  /** The one way a record of the batch is settled: once, through `settleUnit`, its fate then `settled`. */
  async #settleThrough (
    state: RecordState,
    result: PromiseSettledResult<unknown>,
    how: Omit<SettleContext, 'timedOut'>,
    send: (write: () => Promise<Settlement>) => Promise<Settlement>
  ): Promise<void> {
    const fate = state.fate
    if (fate.kind !== 'claimed' || fate.phase === 'settling' || fate.phase === 'settled') return
    this.#become(state, { ...fate, phase: 'settling' })
    // Failed after Middy's timeout, or so close to the deadline that it most likely is one:
    // judged when the work ended, not when the store had room for its write.
    const timedOut = this.timedOut || deadlineWithin(this.context, this.limits.timeoutMarginMs)
    const settlement = await send(async () =>
      await settleUnit(this.config, fate.unit, fate.hold, result, { ...how, timedOut }))
    this.#become(state, {
      ...fate,
      phase: 'settled',
      result: settlement.result,
      settledAs: settlement.kind,
      ...(settlement.onFailure === undefined ? {} : { onFailure: settlement.onFailure }),
      // A hand-written handler's records started when it was handed them.
      durationMs: this.config.now() - (fate.startedMs ?? this.#decidedMs ?? this.lease.nowMs)
    })
    this.followers.ended(state)
  }

  /** Records the handler was given and nobody has settled yet. */
  unsettled (): ClaimedRecord[] {
    return this.#run.filter((s) => s.fate.phase !== 'settled' && s.fate.phase !== 'settling')
  }

  /** Settles each unsettled record with `settle`, within the store's bound. */
  async settleEach (settle: (state: ClaimedRecord) => Promise<void>): Promise<void> {
    await forEachBounded(this.unsettled(), this.limits.maxStoreRequests, settle)
  }

  /** A claimed record the batch closed on before `perRecord` started it. */
  notStarted (state: ClaimedRecord): void {
    this.#become(state, { ...state.fate, phase: 'not-started' })
  }

  /**
   * Whether `perRecord` answered before every record it was given had settled (a returning
   * `timeoutEarlyResponse`).
   */
  unfinished (): boolean {
    return this.scheduled && this.#run.some((s) => s.fate.phase !== 'settled')
  }

  /** The batch's answer, index-aligned with the delivered records; once answered, nothing changes. */
  answer (form: AnswerForm): unknown {
    const response = answerBatch(this, form)
    this.finish()
    return response
  }

  /** Ends the batch without an answer of ours (the error goes on to Lambda). */
  finish ({ report = true } = {}): void {
    if (this.#stage === 'answered') return
    this.#stage = 'answered'
    if (report) reportBatch(this)
  }

  /** The one write of a record: its next fate. */
  #become (state: RecordState, fate: Fate): void {
    const slot = this.#slots.get(state)
    if (slot === undefined) throw new IdempotencyError(`${state.id} is not a record of this batch`)
    slot.fate = fate
  }
}
