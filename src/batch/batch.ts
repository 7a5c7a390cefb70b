import { IdempotencyConfigError, IdempotencyHeldBackError } from '../errors.js'
import type { LifecycleConfig, Unit } from '../unit/config.js'
import { deadlineWithin, remainingMs, type Lease } from '../unit/lease.js'
import { rejected } from '../unit/outcome.js'
import { settleUnit } from '../unit/settle.js'
import type { Hold, Settlement } from '../unit/fenced-writes.js'
import type { BatchSource } from '../sources/source.js'
import { answerBatch, reportBatch, type AnswerForm } from './answer.js'
import type { RecordState } from './record-state.js'
import { Followers } from './follow.js'
import { Bound, forEachBounded } from './bounded.js'

/** How a batch may use the store and run its records (the middleware's options). */
export interface BatchLimits {
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
}

/**
 * Where the batch stands. `open`: records may start. `closed`: none starts any more (the handler
 * or a middleware failed). `timed-out`: Middy's timeout fired, and a record that fails from now on
 * may have taken effect. `answered`: `after` or `onError` has answered; nothing changes any more.
 */
export type BatchStage = 'open' | 'closed' | 'timed-out' | 'answered'

/**
 * One batch, from claim to answer (docs/architecture.md: the batch flow). It alone moves its
 * records and itself from one stage to the next: `perRecord` starts it and settles each record
 * as its work ends, the middleware's hooks close it on a timeout or an error and answer it.
 */
export class Batch {
  /** The claimed records, in the order the handler is given them. */
  run: RecordState[] = []
  /** Something inside ours (the handler, a middleware) has read the handed event's records. */
  recordsRead = false
  /** `perRecord` was called with this batch (whether it scheduled it or, given other records, ran them plainly). */
  handlerCalled = false
  /** The event the handler is given (see `handOver`). */
  handed?: object
  /** Told when `perRecord` takes the batch over: the middleware learns its handler (handler-kind.ts). */
  whenStarted?: () => void
  /** When the claims were decided (epoch ms): the records that did not run took this long from `lease.nowMs`. */
  decidedMs?: number
  private stage: BatchStage = 'open'
  /**
   * Aborts when this batch's own deadline comes: the `signal` each record is given. Never Middy's
   * signal itself, which Middy 5 and 6 share between every invocation of the process (see `watch`).
   */
  private readonly deadline = new AbortController()
  /** Copies waiting, in their group's order, for their original in another group to end. */
  readonly followers = new Followers()
  private startedBy?: 'perRecord'
  /** The batch's settlements in flight, within the store's bound whoever starts them. */
  private readonly storeRequests: Bound

  constructor (
    readonly source: BatchSource,
    readonly config: LifecycleConfig,
    readonly limits: BatchLimits,
    /** The event as Lambda delivered it, restored for outer middlewares. */
    readonly event: object,
    readonly records: RecordState[],
    readonly lease: Lease,
    readonly context: unknown
  ) {
    this.storeRequests = new Bound(limits.concurrency)
  }

  /** `perRecord` schedules this batch: a record it has not started has not run. */
  get scheduled (): boolean { return this.startedBy !== undefined }
  /** No record starts any more. */
  get closed (): boolean { return this.stage !== 'open' }
  get timedOut (): boolean { return this.stage === 'timed-out' }
  get answered (): boolean { return this.stage === 'answered' }

  /** The claimed records are handed to the handler. */
  hand (run: RecordState[]): void {
    this.decidedMs = this.config.now()
    this.run = run
    for (const state of run) state.phase = 'handed'
  }

  /**
   * `perRecord` takes the batch over, listening to Middy's signal for the timeout; it calls the
   * returned function once it has run or skipped every record.
   */
  start (signal: AbortSignal): () => void {
    if (this.scheduled) throw new IdempotencyConfigError('perRecord was called twice on one batch: its records would run twice')
    this.startedBy = 'perRecord'
    this.whenStarted?.()
    return this.watch(signal)
  }

  /** What a record's work is given as `signal`: aborted when this batch's own deadline comes, never another invocation's. */
  get signal (): AbortSignal { return this.deadline.signal }

  /** A record's work starts. */
  begin (state: RecordState): void {
    state.phase = 'running'
    state.startedMs = this.config.now()
  }

  /** No record starts any more. `timedOut`: because the deadline came. */
  close (timedOut: boolean, reason?: unknown): void {
    if (this.stage === 'answered') return
    if (timedOut) {
      this.stage = 'timed-out'
      if (!this.deadline.signal.aborted) this.deadline.abort(reason)
    } else if (this.stage === 'open') this.stage = 'closed'
  }

  /**
   * A record `perRecord` will not start: held back behind its ordering group's failure (released
   * now), or left when the batch closed (released by `closeOnTimeout` before the answer).
   */
  async skip (state: RecordState, why: 'held-back' | 'closed'): Promise<PromiseRejectedResult> {
    const error = new IdempotencyHeldBackError(why === 'closed' ? 'the invocation timed out before it started' : 'an earlier record of its ordering group failed',
      { key: state.unit?.key, ...(state.group === undefined ? {} : { group: state.group }) })
    if (state.outcome?.kind === 'copy') {
      // A copy following its original (see follow.ts) that its group never reached: it did not take its original's result.
      state.outcome = { kind: 'rejected', error }
      return rejected(error)
    }
    if (why === 'closed') {
      if (state.phase === 'handed') state.phase = 'not-started'
      this.followers.ended(state)
    } else {
      await this.settle(state, rejected(error))
    }
    return rejected(error)
  }

  /**
   * Writes what became of one claimed record, the moment it is known; each record once. The
   * writes of every record of the batch share the store's bound (`limits.concurrency`):
   * `writing` is told when this one's turn has come (at once while the store has room).
   */
  async settle (state: RecordState, result: PromiseSettledResult<unknown>, writes: readonly unknown[] = [], writing?: () => void): Promise<void> {
    await this.settleThrough(state, result, writes, async (write) => await this.storeRequests.run(write, writing))
  }

  /**
   * Settles a record the batch closes on (a timeout, an error) at once, not in line behind the
   * completions of records whose work has ended: the answer must reach Lambda before its deadline.
   */
  private async settleOnClose (state: RecordState, result: PromiseRejectedResult): Promise<void> {
    await this.settleThrough(state, result, [], async (write) => await write())
  }

  private async settleThrough (state: RecordState, result: PromiseSettledResult<unknown>, writes: readonly unknown[], send: (write: () => Promise<Settlement>) => Promise<Settlement>): Promise<void> {
    if (state.phase === 'settling' || state.phase === 'settled' || state.outcome?.kind !== 'run') return
    const hold = state.outcome
    state.phase = 'settling'
    // Failed after Middy's timeout, or so close to the deadline that it most likely is one:
    // judged when the work ended, not when the store had room for its write.
    const timedOut = this.timedOut || deadlineWithin(this.context, this.limits.timeoutMarginMs)
    const settlement = await send(async () => await settleUnit(this.config, state.unit as Unit, hold, result, { writes, timedOut }))
    state.result = settlement.result
    state.settledAs = settlement.kind
    if (settlement.onFailure !== undefined) state.onFailure = settlement.onFailure
    // A hand-written handler's records started when it was handed them.
    state.durationMs = this.config.now() - (state.startedMs ?? this.decidedMs ?? this.lease.nowMs)
    state.phase = 'settled'
    this.followers.ended(state)
  }

  /** Records the handler was given and nobody has settled yet. */
  unsettled (): RecordState[] {
    return this.run.filter((s) => s.phase !== 'settled' && s.phase !== 'settling')
  }

  /** Settles each unsettled record with `settle`, within the store's bound. */
  async settleEach (settle: (state: RecordState) => Promise<void>): Promise<void> {
    await forEachBounded(this.unsettled(), this.limits.concurrency, settle)
  }

  /**
   * The deadline came (docs/architecture.md: the batch flow, timeouts): records still running
   * keep their leases (they lapse with this invocation); records `perRecord` had not started are
   * released, never run twice.
   */
  async closeOnTimeout (): Promise<void> {
    this.close(true)
    // Each record still running is logged once, with its outcome (timed out, lease kept).
    if (!this.scheduled) return
    await this.settleEach(async (state) => {
      if (state.phase === 'handed' || state.phase === 'not-started') {
        state.phase = 'not-started'
        await this.settleOnClose(state, rejected(new IdempotencyHeldBackError('the invocation timed out before it started')))
      }
    })
  }

  /**
   * The handler or a middleware inside ours failed with `error`, before the deadline. Nothing
   * can have run a record that nobody read (a middleware failed in `before`), nor, with
   * `perRecord`, one it did not start: those are released whatever `onFailure` says.
   * `perRecordHandler`: this middleware's handler is known to be `perRecord` (see handler-kind.ts).
   */
  async closeOnError (error: unknown, perRecordHandler: boolean): Promise<void> {
    this.close(false)
    const handlerMayHaveRun = this.scheduled || this.handlerCalled || (this.recordsRead && !perRecordHandler)
    await this.settleEach(async (state) => {
      // A record perRecord is still running settles itself when its work ends.
      if (state.phase === 'running') return
      const started = handlerMayHaveRun && (!this.scheduled || (state.phase !== 'handed' && state.phase !== 'not-started'))
      await this.settleOnClose(state, rejected(started ? error : new IdempotencyHeldBackError('the invocation failed before the handler started it (a middleware inside idempotency, or the handler before reading it)')))
    })
  }

  /** Whether `perRecord` answered before every record it was given had settled (a returning `timeoutEarlyResponse`). */
  unfinished (): boolean {
    return this.scheduled && this.run.some((s) => s.phase !== 'settled')
  }

  /** The batch's answer, index-aligned with the delivered records; once answered, nothing changes. */
  answer (form: AnswerForm): unknown {
    const response = answerBatch(this, form)
    this.finish()
    return response
  }

  /** Ends the batch without an answer of ours (the error goes on to Lambda). */
  finish ({ report = true } = {}): void {
    if (this.stage === 'answered') return
    this.stage = 'answered'
    if (report) reportBatch(this)
  }

  /**
   * Middy aborts its signal when the early timeout fires, before the middleware's hooks run.
   * Middy 5 and 6 share one signal between every invocation of a process (Lambda Managed
   * Instances run several at once), and the one that timed out may be any of them, listening or
   * not (its handler had not reached `perRecord` yet). So only a batch whose own deadline is near
   * takes the abort as its own at once; any other is closed by its own invocation's hooks
   * (`closeOnTimeout`), a few microtasks later, when the timeout was its own.
   */
  private watch (signal: AbortSignal): () => void {
    const onAbort = (): void => {
      // Without a Lambda context (a local run) there is no deadline to judge by, nor another invocation.
      if (remainingMs(this.context) === undefined || deadlineWithin(this.context, this.limits.timeoutMarginMs)) this.close(true, signal.reason)
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    return () => { signal.removeEventListener('abort', onAbort) }
  }
}

/** The hold on a claimed record (its lease token), for paths that write it directly. */
export const holdOf = (state: RecordState): Hold => state.outcome as Hold
