import { IdempotencyConfigError, IdempotencyError } from '../errors.js'
import { fulfilled, rejected } from '../lifecycle/outcome.js'
import { isReported, kindOfRefusal, reportOutcome } from '../observe/log.js'
import type { OutcomeKind } from '../types.js'
import { identifierOf, type BatchSource } from '../sources/source.js'
import type { LifecycleConfig } from '../lifecycle/config.js'
import { resultOf, settledOf, unitOf, type ClaimedRecord, type RecordState } from './record-state.js'
import { attribute, namedFailed } from './attribute.js'

/** What answering and reporting read of a batch (the `Batch` owns it; this module only reads). */
interface BatchView {
  readonly records: readonly RecordState[]
  readonly source: BatchSource
  readonly config: LifecycleConfig
  readonly lease: { nowMs: number }
  readonly decidedMs?: number
}

/**
 * What reading a hand-written handler's answer needs: the records it was given (`run`, in the
 * order it was given them), the records as it left them in its event (`left`; undefined: as
 * given), and the records Lambda delivered.
 */
export interface AnsweredBatch {
  readonly run: readonly ClaimedRecord[]
  readonly left?: readonly unknown[]
  readonly delivered: readonly RecordState[]
  readonly source: BatchSource
}

/** How the handler answered: its `Promise.allSettled` array, or Lambda's own `{ batchItemFailures }`. */
export type AnswerForm = 'array' | 'native'

/** A hand-written handler's answer, read: a result per record it ran; `cutOff` when the deadline came first. */
export interface ReadAnswer { form: AnswerForm, results: Array<PromiseSettledResult<unknown>>, cutOff?: true }

const PENDING = Symbol('pending at the deadline')

/**
 * Maps the handler's answer back onto the records it was given (docs/architecture.md: the batch
 * flow, answer), as results aligned with `run`. An array is aligned with `left`, the records as
 * the handler left them (attribute.ts); `{ batchItemFailures }` names records of `delivered`.
 * An entry that is a promise (a handler that returned `event.Records.map(async ...)` without
 * `Promise.allSettled`) is awaited and settles its record as `Promise.allSettled` would have:
 * what the handler meant, and never a record acknowledged before its work has ended.
 */
export const readAnswer = async (response: unknown, batch: AnsweredBatch, waitMs?: number): Promise<ReadAnswer> => {
  const { run, source } = batch
  if (Array.isArray(response)) {
    if (response.length !== run.length) {
      throw new IdempotencyConfigError(`idempotency: the handler returned ${response.length} results ` +
        `for the ${run.length} records it was given; ` +
        'use perRecord(fn), or return Promise.allSettled(event.Records.map(...)) or { batchItemFailures }')
    }
    const order = batch.left === undefined ? run : attribute(run, batch.left, source)
    // Middy's timeout covers the handler, not this wait: a promise still pending near the deadline
    // is left running (its record keeps its lease), so that the records that finished are stored
    // before Lambda ends the invocation and every one of them would run again.
    let timer: ReturnType<typeof setTimeout> | undefined
    let cutOff = false
    const deadline = waitMs === undefined
      ? undefined
      : new Promise<typeof PENDING>((resolve) => {
          timer = setTimeout(() => { cutOff = true; resolve(PENDING) }, Math.max(0, waitMs))
        })
    try {
      const settled = await Promise.all(response.map(async (entry) => await asSettled(entry, deadline)))
      const byRecord = new Map(order.map((state, i) => [state, settled[i] as PromiseSettledResult<unknown>]))
      const results = run.map((state) => byRecord.get(state) as PromiseSettledResult<unknown>)
      return { form: 'array', results, ...(cutOff ? { cutOff: true as const } : {}) }
    } finally {
      clearTimeout(timer)
    }
  }
  const failures = (response as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures
  // No per-record answer (undefined, or anything else), or a null list: Lambda reads that as "all succeeded".
  if (failures === undefined || failures === null) {
    return { form: 'native', results: run.map(() => fulfilled(undefined)) }
  }
  const failed = namedFailed(failures, batch.delivered, source)
  const reported = (id: string): PromiseRejectedResult =>
    rejected(new Error(`${id} was reported in batchItemFailures by the handler`))
  return { form: 'native', results: run.map((s) => failed.has(s.id) ? reported(s.id) : fulfilled(undefined)) }
}

/**
 * An entry of `Promise.allSettled` has exactly `status` and `value`, or `status` and `reason`;
 * a thenable is awaited; anything else is a plain result.
 */
const asSettled = async (
  entry: unknown,
  deadline?: Promise<typeof PENDING>
): Promise<PromiseSettledResult<unknown>> => {
  if (typeof (entry as { then?: unknown } | null)?.then === 'function') {
    const settled = Promise.resolve(entry as PromiseLike<unknown>).then(fulfilled, rejected)
    const first = deadline === undefined ? await settled : await Promise.race([settled, deadline])
    return first === PENDING
      ? rejected(new IdempotencyError(
          'its promise was still pending near the deadline: left running, its lease kept until it lapses'))
      : first
  }
  if (entry === null || typeof entry !== 'object') return fulfilled(entry)
  const keys = Object.keys(entry)
  const { status } = entry as { status?: unknown }
  const settled = keys.length === 2 &&
    ((status === 'fulfilled' && keys.includes('value')) || (status === 'rejected' && keys.includes('reason')))
  return settled ? entry as PromiseSettledResult<unknown> : fulfilled(entry)
}

/**
 * The response, index-aligned with the records Lambda delivered: the settled array, or
 * Lambda's own `{ batchItemFailures }`. The latter also carries the settled results under
 * non-enumerable indexes: `@middy/sqs-partial-batch-failure`, if it is in the stack, reads
 * `response[i]` and reports exactly, while Lambda, which receives `JSON.stringify(response)`,
 * sees only `batchItemFailures`.
 */
export const answerBatch = (batch: BatchView, form: AnswerForm): unknown => {
  const results = batch.records.map(resultOf)
  if (form === 'array' && batch.source.answer === 'settled') {
    return readableByLambda(results, batch.records.map((s) => identifierOf(batch.source, s.record)))
  }
  const response = {
    batchItemFailures: batch.records
      .filter((_, i) => results[i]?.status === 'rejected')
      .map((s) => ({ itemIdentifier: identifierOf(batch.source, s.record) }))
  }
  results.forEach((result, i) => { Object.defineProperty(response, i, { value: result, enumerable: false }) })
  return response
}

/**
 * The settled array, as Lambda will read it too: the Node.js runtime answers
 * `JSON.stringify(response)`, and a `toJSON` makes that `{ batchItemFailures }` naming the
 * rejected entries by `ids` (index-aligned). So the failures are reported with or without
 * `@middy/sqs-partial-batch-failure` (which reads `response[i]`), and code that reads the array
 * still can. Without it, an array is read as "all succeeded" and every failure would be lost:
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 */
export const readableByLambda = <T extends Array<PromiseSettledResult<unknown>>>(
  results: T,
  ids: readonly unknown[]
): T => {
  Object.defineProperty(results, 'toJSON', {
    value: () => ({
      batchItemFailures: results.flatMap((r, i) =>
        r.status === 'rejected' && ids[i] !== undefined ? [{ itemIdentifier: ids[i] }] : [])
    }),
    enumerable: false
  })
  return results
}

/** Logs and tells `onOutcome` what became of every record of the batch, once it is known. */
export const reportBatch = (batch: BatchView): void => {
  for (const state of batch.records) {
    const result = resultOf(state)
    const error = result.status === 'rejected' ? result.reason : undefined
    const kind = kindOf(state, error)
    if (!isReported(batch.config, kind)) continue
    const settled = settledOf(state)
    const durationMs = settled?.durationMs ?? (batch.decidedMs ?? batch.config.now()) - batch.lease.nowMs
    const unit = unitOf(state)
    reportOutcome(batch.config, {
      kind,
      id: state.id,
      ...(batch.source.mode === 'sqs' ? { messageId: state.id } : {}),
      ...(unit === undefined ? {} : { key: unit.key }),
      durationMs,
      ...(settled?.onFailure === undefined ? {} : { onFailure: settled.onFailure }),
      ...(error === undefined ? {} : { error })
    })
  }
}

const kindOf = ({ fate }: RecordState, error: unknown): OutcomeKind => {
  switch (fate.kind) {
    case 'copy': return 'in-batch-copy'
    case 'decided': return fate.decision.kind === 'replay' ? 'replayed' : kindOfRefusal(error)
    case 'claimed':
      return fate.phase === 'settled' ? fate.settledAs : fate.phase === 'not-started' ? 'held-back' : 'timed-out'
    default: return kindOfRefusal(error)
  }
}
