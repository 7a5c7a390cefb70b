import { IdempotencyConfigError } from '../errors.js'
import type { LifecycleConfig } from '../lifecycle/config.js'
import {
  leaseFor, originalError, remainingMs, storeDeadline, timedOut, watchErrors, withDeadline, type Lease
} from '../lifecycle/deadline.js'
import type { Selection } from '../keys/prepare.js'
import { fieldOf, listOf, type BatchSource } from '../sources/source.js'
import type { MiddyRequest } from '../types.js'
import type { Hooks } from './idempotency.js'
import { readAnswer, type ReadAnswer } from '../batch/answer.js'
import { Batch } from '../batch/batch.js'
import type { BatchLimits } from '../batch/limits.js'
import { closeOnAnswer, closeOnError, closeOnTimeout, closeOnUnreadableAnswer } from '../batch/close.js'
import { claimBatch, prepareRecords } from '../batch/claim-batch.js'
import type { PreparedRecord } from '../batch/record-state.js'
import { handOver, takeBack } from '../batch/handover.js'
import { sourceByMode, sourceOf } from '../sources/index.js'
import { defaults } from '../defaults.js'
import type { Setup } from '../options.js'

/**
 * The batch events of one middleware (SQS, Kinesis, DynamoDB Streams, Kafka): the hooks of the
 * request's source, made the first time the source is met, or undefined when the event is no batch.
 */
export const batchHooks = (
  { resolved, maxStoreRequests, config, selection }: Setup
): (request: MiddyRequest) => Hooks | undefined => {
  const handler = new HandlerKind()
  const forced = resolved.mode === 'auto' || resolved.mode === 'event' ? undefined : sourceByMode(resolved.mode)
  const bySource = new Map<BatchSource, Hooks>()
  return (request) => {
    const source = forced ?? sourceOf(request.event)
    if (source === undefined) return undefined
    let hooks = bySource.get(source)
    if (hooks === undefined) {
      const keyName = typeof source.defaults.key === 'string' ? `key path "${source.defaults.key}"` : 'the default key'
      hooks = sourceHooks(config, source, selection(source.defaults, keyName, source.encoded),
        {
          maxStoreRequests: resolved.maxStoreRequests,
          recordConcurrency: maxStoreRequests ?? defaults.maxStoreRequests,
          timeoutMarginMs: resolved.timeoutMarginMs
        }, handler, forced !== undefined)
      bySource.set(source, hooks)
    }
    return hooks
  }
}

/**
 * The Middy hooks of one batch source (docs/architecture.md: the batch flow). `before` claims every
 * record and hands the handler only those it must run; each record is settled as soon as its work
 * ends (`perRecord`) or, for a hand-written handler, in `after`; `after` and `onError` restore the
 * delivered event and answer index-aligned with it.
 */
const sourceHooks = (
  config: LifecycleConfig,
  source: BatchSource,
  selection: Selection,
  limits: BatchLimits,
  handler: HandlerKind,
  /** The source is the `mode` option's, not recognised from the event: another source's batch may come. */
  forced: boolean
): Hooks => {
  const batches = new WeakMap<MiddyRequest, Batch>()
  /** Events `before` refused before claiming anything: `onError` throws the refusal on (see there). */
  const refused = new WeakMap<MiddyRequest, unknown>()
  /** A refusal of the whole event, logged (whatever answers it later) and noted for `onError`. */
  const refusal = (request: MiddyRequest, error: unknown): unknown => {
    config.log.error({ message: (error as Error).message, error })
    refused.set(request, error)
    return error
  }

  const before = async (request: MiddyRequest): Promise<unknown> => {
    const event = request.event as object
    const delivered = listOf(source, event)
    // Another source's batch, in a forced mode: its records would be refused one by one as malformed.
    const other = !forced || delivered?.length === 0 ? undefined : sourceOf(event)
    if (delivered === undefined || (other !== undefined && other !== source)) {
      const expected = source.layout === undefined
        ? `a Records array of ${source.eventSource} records`
        : `its ${fieldOf(source)}`
      const not = other === undefined || other === source ? '' : `, not ${other.eventName}`
      throw refusal(request, new IdempotencyConfigError(
        `idempotency: mode '${source.mode}' expects ${source.eventName} (${expected})${not}`))
    }
    watchErrors(request)
    // In a durable execution, every record it claimed runs again in each replay, finished or not
    // (see `claim`).
    const lease: Lease = { ...leaseFor(request.context, config.now, 'event-source-mapping'), rerunFinished: true }
    // This batch's store calls, bounded by its own deadline (docs/architecture.md: a store that hangs).
    const bounded = withDeadline(config, storeDeadline(request.context, limits.timeoutMarginMs))
    let records: PreparedRecord[]
    try {
      records = prepareRecords(source, selection, delivered, request.context, event)
    } catch (error) {
      // A record with no identity (another service's Records in a forced mode, an SNS notification).
      throw refusal(request, error)
    }
    const batch: Batch = new Batch(source, bounded, limits, event, records, lease, request.context,
      () => { handler.learn(batch) })
    // Registered before claiming, so that onError can release whatever was claimed should anything
    // below throw.
    batches.set(request, batch)
    await claimBatch(bounded, source, limits.maxStoreRequests, batch, lease, handler.perRecord)
    batch.hand()
    // A tumbling window's handler runs even with no record to run: it carries the window's
    // state, and its final invocation (often with no records) is where the window is processed.
    // https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-windows.html
    const tumbling = (event as { window?: unknown }).window !== undefined
    if (batch.run.length === 0 && !tumbling) {
      // Nothing to run, so the handler must not be called. Returning early skips every
      // `after` hook, the batch middleware's too, so the answer is already in Lambda's
      // own `{ batchItemFailures }` shape (docs/guarantees.md: what happens on each path).
      return batch.answer('native')
    }
    request.event = handOver(event, batch)
    return undefined
  }

  const after = async (request: MiddyRequest): Promise<void> => {
    const batch = batches.get(request)
    if (batch === undefined || batch.answered) return
    handler.learn(batch)
    // The records as the handler left them (sorted in place, or another array put there), read
    // before the delivered event is restored: its answer is aligned with those. Through the event
    // a middleware inside ours may have put in place of ours, or else ours.
    const left = listOf(source, request.event) ??
      (batch.handed === undefined ? undefined : listOf(source, batch.handed))
    request.event = batch.event
    if (config.transactOnly === true && !batch.scheduled) {
      // Nothing was claimed: the records are simply not acknowledged, and run again; nothing
      // became of them to report.
      batch.finish({ report: false })
      takeBack(batch)
      throw new IdempotencyConfigError("idempotency: effects: 'transact-only' needs the handler to be perRecord(fn), " +
        'whose effects are its transact writes')
    }
    if (batch.closed || batch.unfinished()) {
      // Middy's timeout answered (a `timeoutEarlyResponse` that returns) while work was running.
      // Promises the handler returned are not waited for; their rejections must not end the process.
      if (Array.isArray(request.response)) {
        for (const entry of request.response) (entry as Partial<Promise<unknown>> | null)?.catch?.(() => {})
      }
      await closeOnTimeout(batch)
      return answer(request, batch, 'native')
    }
    if (batch.scheduled) {
      // perRecord settled each record it was handed, by its own result or, for one it was not
      // given, by releasing it: there is nothing to read. Its answer is aligned with the records
      // it was given (which a middleware inside ours may have changed), not with these.
      return answer(request, batch, Array.isArray(request.response) ? 'array' : 'native')
    }
    let read: ReadAnswer
    try {
      const leftMs = remainingMs(request.context)
      const answered = { run: batch.run, delivered: batch.records, source, left: left ?? [] }
      const waitMs = leftMs === undefined ? undefined : leftMs - limits.timeoutMarginMs
      read = await readAnswer(request.response, answered, waitMs)
    } catch (error) {
      // The handler ran but its answer cannot be read: some records may have taken effect.
      // Keep them FAILED rather than release them to run again; the error goes on to onError.
      config.log.error({ message: (error as Error).message, error })
      await closeOnUnreadableAnswer(batch, error)
      end(batch)
      throw error
    }
    await closeOnAnswer(batch, read)
    // A tumbling window's `state` is the handler's to carry to the next invocation:
    // https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-windows.html
    const window = request.response as { state?: unknown } | null | undefined
    const carriesState = read.form === 'native' && typeof window === 'object' && window !== null && 'state' in window
    const state = carriesState ? { state: window.state } : {}
    answer(request, batch, read.form)
    Object.assign(request.response as object, state)
  }

  const onError = async (request: MiddyRequest): Promise<void> => {
    // Thrown on, so that no outer onError answers it: @middy/sqs-partial-batch-failure's would turn an
    // event without Records into an empty batchItemFailures, and Lambda would drop the batch unrun.
    const refusal = refused.get(request)
    if (refusal !== undefined) throw refusal
    const batch = batches.get(request)
    if (batch === undefined) return
    handler.learn(batch)
    request.event = batch.event
    if (batch.answered) return
    if (batch.closed || timedOut(request, limits.timeoutMarginMs)) {
      await closeOnTimeout(batch)
      // perRecord knows what became of each record: the finished ones are answered as such,
      // instead of the whole batch coming back (they would only replay, but cost a delivery).
      if (batch.scheduled) {
        config.log.warn({
          message: 'idempotency: timed out; the records that had not finished are reported failed',
          error: originalError(request)
        })
        return answer(request, batch, 'native')
      }
    } else {
      // With `perRecord` known to be the handler, a batch it was never called with never started
      // a record, whoever read the records (a validator): see HandlerKind below.
      await closeOnError(batch, originalError(request), handler.perRecord)
    }
    // A middleware inside ours answered the error (a misordered batch middleware, built on
    // the records the handler saw): the answer must cover every delivered record.
    if (request.response !== undefined) answer(request, batch, 'native')
    else end(batch)
  }

  const answer = (request: MiddyRequest, batch: Batch, form: 'array' | 'native'): void => {
    request.response = batch.answer(form)
    takeBack(batch)
  }

  const end = (batch: Batch): void => {
    batch.finish()
    takeBack(batch)
  }

  return { before, after, onError }
}

/**
 * Whether a middleware's handler is `perRecord`, as far as the middleware knows.
 *
 * Middy never shows a middleware its handler (it is a closure of `middy()`), and a middleware
 * inside ours may fail in `before` after reading the records (a validator): with `perRecord` the
 * records then never ran, with a hand-written handler that read them they may have. Releasing
 * records that ran would run them twice; keeping FAILED records that never ran leaves them to the
 * operator (`middy-idempotency release`). So the middleware assumes the handler may have run what
 * it read until it knows better: once `perRecord` has been called with one of its batches, a fact
 * about the stack that only ever becomes true (no invocation's state: on Lambda Managed Instances
 * concurrent invocations only read it, or set it to the same value).
 *
 * Pairing a middleware with a `perRecord` built in the same synchronous stretch of code was tried
 * and dropped: a `perRecord` built there for another stack (two handlers in one module, a library
 * module evaluated in the same turn) paired with a hand-written handler, whose charged records
 * were then released and charged again (docs/batches.md: a middleware after `idempotency` that fails in `before`).
 */
class HandlerKind {
  #perRecord = false

  /** `perRecord` has been called with a batch of this middleware. */
  get perRecord (): boolean { return this.#perRecord }

  /** Told of each batch the middleware answers: `perRecord` took part in it. */
  learn (batch: { scheduled: boolean, handlerCalled: boolean }): void {
    if (batch.scheduled || batch.handlerCalled) this.#perRecord = true
  }
}
