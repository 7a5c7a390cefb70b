import { forEachBounded } from '../bounded.js'
import { IdempotencyConfigError, IdempotencyHeldBackError } from '../errors.js'
import type { LifecycleConfig, Unit } from '../lifecycle/config.js'
import { leaseFor } from '../lifecycle/lease.js'
import { rejected } from '../lifecycle/outcome.js'
import type { Selection } from '../lifecycle/prepare.js'
import { keepFailed, type Hold } from '../lifecycle/settle.js'
import { originalError, timedOut, watchErrors } from '../lifecycle/timeout.js'
import { fieldOf, listOf, shapeOf, type BatchSource } from '../sources/source.js'
import type { Adapter, MiddyRequest } from '../adapters/adapter.js'
import { answerBatch, readAnswer, reportBatch } from './answer.js'
import { claimBatch, prepareRecords } from './claim-batch.js'
import { resultOf, settleRecord } from './settle-record.js'
import { forgetBatch, registerBatch, type BatchState, type RecordState } from './state.js'

export interface BatchAdapterOptions { concurrency: number, recordConcurrency: number, timeoutMarginMs: number }

/**
 * The Middy hooks of one batch source (docs/architecture.md: the batch flow). `before` claims every record and hands
 * the handler only those it must run; each record is settled as soon as its work ends
 * (`perRecord`) or, for a hand-written handler, in `after`; `after` and `onError` restore the
 * delivered event and answer index-aligned with it.
 */
export const batchAdapter = (config: LifecycleConfig, source: BatchSource, selection: Selection, options: BatchAdapterOptions): Adapter => {
  const batches = new WeakMap<MiddyRequest, BatchState>()
  const { concurrency } = options

  const before = async (request: MiddyRequest): Promise<unknown> => {
    const event = request.event as object
    const delivered = listOf(source, event)
    if (delivered === undefined) {
      const error = new IdempotencyConfigError(`idempotency: mode '${source.mode}' expects ${source.eventName} (${source.layout === undefined ? `a Records array of ${source.eventSource} records` : `its ${fieldOf(source)}`})`)
      // Logged as well as thrown: @middy/sqs-partial-batch-failure's onError turns an event
      // without Records into an empty batchItemFailures, which would hide it.
      config.logger.error({ message: error.message, error })
      throw error
    }
    watchErrors(request)
    const lease = leaseFor(request.context, config.now)
    const records = prepareRecords(source, selection, delivered, request.context, event)
    const batch: BatchState = { source, config, concurrency, recordConcurrency: options.recordConcurrency, timeoutMarginMs: options.timeoutMarginMs, event, records, run: [], lease, context: request.context, scheduled: false, closed: false, timedOut: false, answered: false, recordsRead: false }
    // Registered before claiming, so that onError can release whatever was claimed should anything below throw.
    batches.set(request, batch)
    await claimBatch(config, source, concurrency, records, lease)
    batch.run = records.filter((s) => s.outcome?.kind === 'run')
    for (const state of batch.run) state.phase = 'handed'
    // A tumbling window's handler runs even with no record to run: it carries the window's
    // state, and its final invocation (often with no records) is where the window is processed.
    // https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-windows.html
    const tumbling = (event as { window?: unknown }).window !== undefined
    if (batch.run.length === 0 && !tumbling) {
      // Nothing to run, so the handler must not be called. Returning early skips every
      // `after` hook, the batch middleware's too, so the answer is already in Lambda's
      // own `{ batchItemFailures }` shape (README: What happens on each path).
      batch.answered = true
      for (const state of records) {
        const result = resultOf(state)
        if (result.status === 'rejected') config.logger.warn({ message: 'idempotency: record reported failed', id: state.id, error: result.reason })
      }
      reportBatch(batch)
      return answerBatch(batch, 'native')
    }
    const handed = handOver(event, batch)
    registerBatch(handed, batch)
    request.event = handed
    return undefined
  }

  /**
   * Whether this middleware's handler is `perRecord`, learned from the batches it served: then
   * a batch it never scheduled never started a record, whoever read the records (a validator).
   */
  let handlerIsPerRecord = false

  const after = async (request: MiddyRequest): Promise<void> => {
    const batch = batches.get(request)
    if (batch?.scheduled === true) handlerIsPerRecord = true
    if (batch === undefined || batch.answered) return
    request.event = batch.event
    if (config.transactOnly === true && !batch.scheduled) {
      // Nothing was claimed: the records are simply not acknowledged, and run again.
      batch.answered = true
      forgetBatch(batch)
      throw new IdempotencyConfigError("idempotency: effects: 'transact-only' needs the handler to be perRecord(fn), whose effects are its transact writes")
    }
    if (batch.closed || unfinished(batch)) {
      // Middy's timeout answered (a `timeoutEarlyResponse` that returns) while work was running.
      // Promises the handler returned are not waited for; their rejections must not end the process.
      if (Array.isArray(request.response)) for (const entry of request.response) (entry as Partial<Promise<unknown>> | null)?.catch?.(() => {})
      await closeOnTimeout(batch)
      return answer(request, batch, 'native')
    }
    let read: Awaited<ReturnType<typeof readAnswer>>
    try {
      read = await readAnswer(request.response, batch.run, source)
    } catch (error) {
      // The handler ran but its answer cannot be read: some records may have taken effect.
      // Keep them FAILED rather than release them to run again; the error goes on to onError.
      config.logger.error({ message: (error as Error).message, error })
      await settleUnsettled(batch, async (state) => {
        await keepFailed(config, state.unit as Unit, state.outcome as Hold, error)
        Object.assign(state, { result: rejected(error), settledAs: 'failed', phase: 'settled' })
      })
      batch.answered = true
      reportBatch(batch)
      forgetBatch(batch)
      throw error
    }
    await forEachBounded(batch.run, concurrency, async (state, i) => {
      await settleRecord(batch, state, read.results[i] as PromiseSettledResult<unknown>)
    })
    // A tumbling window's `state` is the handler's to carry to the next invocation:
    // https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-windows.html
    const window = request.response as { state?: unknown } | null | undefined
    const state = read.form === 'native' && typeof window === 'object' && window !== null && 'state' in window ? { state: window.state } : {}
    answer(request, batch, read.form)
    Object.assign(request.response as object, state)
  }

  const onError = async (request: MiddyRequest): Promise<void> => {
    const batch = batches.get(request)
    if (batch === undefined) return
    request.event = batch.event
    if (batch.answered) return
    if (batch.closed || timedOut(request, options.timeoutMarginMs)) {
      await closeOnTimeout(batch)
      // perRecord knows what became of each record: the finished ones are answered as such,
      // instead of the whole batch coming back (they would only replay, but cost a delivery).
      if (batch.scheduled) {
        config.logger.warn({ message: 'idempotency: timed out; the records that had not finished are reported failed', error: originalError(request) })
        return answer(request, batch, 'native')
      }
    } else {
      batch.closed = true
      if (batch.scheduled) handlerIsPerRecord = true
      const error = originalError(request)
      // Nothing can have run a record that nobody read (a middleware inside ours failed in
      // `before`: SSM, secrets), nor, with perRecord, one it did not start: such records are
      // released whatever `onFailure` says, never kept FAILED without having run.
      const handlerMayHaveRun = batch.scheduled || batch.handlerCalled === true || (batch.recordsRead && !handlerIsPerRecord)
      await settleUnsettled(batch, async (state) => {
        // A record perRecord is still running settles itself when its work ends.
        if (state.phase === 'running') return
        const started = handlerMayHaveRun && (!batch.scheduled || (state.phase !== 'handed' && state.phase !== 'not-started'))
        await settleRecord(batch, state, rejected(started ? error : notStarted('the invocation failed before the handler started it (a middleware inside idempotency, or the handler before reading it)')))
      })
    }
    // A middleware inside ours answered the error (a misordered batch middleware, built on
    // the records the handler saw): the answer must cover every delivered record.
    if (request.response !== undefined) answer(request, batch, 'native')
    else finish(batch)
  }

  /**
   * The deadline came (docs/architecture.md: the batch flow, timeouts): records still running keep their leases (they lapse
   * with this invocation); records `perRecord` had not started are released, never run twice.
   */
  const closeOnTimeout = async (batch: BatchState): Promise<void> => {
    batch.closed = true
    batch.timedOut = true
    const running = batch.run.filter((s) => s.phase === 'running' || s.phase === 'settling' || (s.phase === 'handed' && !batch.scheduled))
    if (running.length > 0) config.logger.warn({ message: 'idempotency: timed out; leases of running records kept until they lapse', keys: running.map((s) => s.unit?.key) })
    await settleUnsettled(batch, async (state) => {
      if (batch.scheduled && (state.phase === 'handed' || state.phase === 'not-started')) {
        state.phase = 'not-started'
        await settleRecord(batch, state, rejected(notStarted('the invocation timed out before it started')))
      }
    })
  }

  /**
   * Whether the handler's answer came before its work was done (a custom
   * `timeoutEarlyResponse` that returns). perRecord knows: it resolves only once every record
   * is settled. A hand-written handler's answer is trusted: one that answers shortly before
   * the deadline cannot be told apart from a returning `timeoutEarlyResponse`, and re-running
   * every record it finished would be the likelier harm (the README says to use perRecord).
   */
  const unfinished = (batch: BatchState): boolean => batch.scheduled && batch.run.some((s) => s.phase !== 'settled')

  const settleUnsettled = async (batch: BatchState, settle: (state: RecordState) => Promise<void>): Promise<void> => {
    await forEachBounded(batch.run.filter((s) => s.phase !== 'settled' && s.phase !== 'settling'), concurrency, settle)
  }

  const answer = (request: MiddyRequest, batch: BatchState, form: 'array' | 'native'): void => {
    request.response = answerBatch(batch, form)
    finish(batch)
  }

  const finish = (batch: BatchState): void => {
    batch.answered = true
    reportBatch(batch)
    forgetBatch(batch)
  }

  return { before, after, onError }
}


/**
 * The event the handler is given: only the records it must run, under a `Records` that notes
 * being read, so that a failure before anything read them is known not to have run them.
 */
const handOver = (event: object, batch: BatchState): object => {
  let records = shapeOf(batch.source, batch.run.map((s) => s.record))
  const handed = { ...event }
  Object.defineProperty(handed, fieldOf(batch.source), {
    get: () => { batch.recordsRead = true; return records },
    set: (value: unknown) => { batch.recordsRead = true; records = value },
    enumerable: true,
    configurable: true
  })
  return handed
}

const notStarted = (why: string): IdempotencyHeldBackError => new IdempotencyHeldBackError(why)
