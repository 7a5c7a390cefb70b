import type { Context } from 'aws-lambda'
import { IdempotencyConfigError } from '../errors.js'
import { readableByLambda } from './answer.js'
import { matchEach } from './attribute.js'
import type { Batch } from './batch.js'
import { Followers, isClaimed, settledOf, type ClaimedRecord, type RecordState } from './record-state.js'
import { defaultKeyOf } from './claim-batch.js'
import { batchFor } from './handover.js'
import { heldBackError, schedule } from './schedule.js'
import { fulfilled, rejected } from '../lifecycle/outcome.js'
import { queueTransact } from '../lifecycle/completion.js'
import { defaults } from '../defaults.js'
import { refuseUnknownOptions } from '../unknown-options.js'
import { sourceOf } from '../sources/index.js'
import { listOf, recordsOf, identifierOf, type BatchSource } from '../sources/source.js'
import type { BatchEvent, PerRecordHandler, PerRecordOptions, RecordOf, RecordTools } from '../types.js'

/**
 * The batch handler that runs `fn` once per record and settles each record the moment its
 * own `fn` settles (docs/architecture.md: the batch flow): with `idempotency` in the stack, a record is COMPLETED (or
 * goes through `onFailure`) without waiting for its neighbours, so a timeout or a crash in
 * the middle of a batch re-runs no record that had finished. Records of one ordering group
 * (FIFO message group) run one at a time, in order, and stop at the group's first failure;
 * once Middy's timeout fires, no record starts. Answers `Promise.allSettled`'s shape, so
 * `@middy/sqs-partial-batch-failure` reports exactly the records that failed.
 *
 * The record is typed by the event: given to `middy<SQSEvent>(perRecord(fn))` it is inferred
 * from there; inside `.handler(...)`, whose parameter Middy types so that nothing can be inferred
 * from it, say the event once: `perRecord<SQSEvent>(fn)`. A record type works too
 * (`perRecord<SQSRecord>(fn)`, or an annotated `fn`).
 *
 * @example
 * ```ts
 * export const handler = middy<SQSEvent>()
 *   .use(sqsPartialBatchFailure())
 *   .use(idempotency({ store: new DynamoDBStore({ tableName: 'IdempotencyStore' }) }))
 *   .handler(perRecord<SQSEvent>(async (record, { signal, transact }) => {
 *     const order = JSON.parse(record.body)
 *     transact({ Put: { TableName: 'Orders', Item: order, ConditionExpression: 'attribute_not_exists(id)' } })
 *     return { orderId: order.id }
 *   }))
 * ```
 */
export function perRecord<TEvent extends BatchEvent = any, TResult = unknown> (
  fn: (record: RecordOf<TEvent>, tools: RecordTools) => Promise<TResult> | TResult,
  options?: PerRecordOptions
): PerRecordHandler<RecordOf<TEvent>, TResult, TEvent>
export function perRecord<TRecord = any, TResult = unknown> (
  fn: (record: TRecord, tools: RecordTools) => Promise<TResult> | TResult,
  options?: PerRecordOptions
): PerRecordHandler<TRecord, TResult>
export function perRecord<TRecord, TResult> (
  fn: (record: TRecord, tools: RecordTools) => Promise<TResult> | TResult,
  options: PerRecordOptions = {}
): PerRecordHandler<TRecord, TResult> {
  if (typeof fn !== 'function') throw new IdempotencyConfigError('perRecord: the record function is required')
  refuseUnknownOptions('perRecord', options ?? {}, ['concurrency'])
  const { concurrency } = options ?? {}
  if (concurrency !== undefined && !(Number.isSafeInteger(concurrency) && concurrency > 0)) {
    throw new IdempotencyConfigError('perRecord: concurrency must be a positive integer')
  }
  return async (event, context, middyOptions) => {
    const batch = batchFor(event, context)
    const source = batch?.source ?? sourceOf(event)
    const records = source === undefined ? recordsOf(event) : listOf(source, event)
    if (records === undefined) {
      throw new IdempotencyConfigError('perRecord: the event has no records (a Records array, or Kafka\'s records): ' +
        'is this a batch event source?')
    }
    const signal = middyOptions?.signal ?? new AbortController().signal
    batch?.handlerWasCalled()
    if (batch !== undefined) {
      const run = { context, signal, concurrency: concurrency ?? batch.limits.recordConcurrency }
      return await runBatch(batch, records as TRecord[], fn, run) as Array<PromiseSettledResult<TResult>>
    }
    // Without the middleware, the default the middleware's own maxStoreRequests would give.
    const plain = concurrency ?? defaults.maxStoreRequests
    return await runPlain(event, records as TRecord[], fn, { context, signal, concurrency: plain })
  }
}

/**
 * The tools of one record; `key` is read when asked for, so that a record without one fails only if
 * its function needs it.
 */
const toolsOf = (run: Run, transact: RecordTools['transact'], key: () => string): RecordTools =>
  ({ context: run.context, signal: run.signal, transact, get key () { return key() } })

const noKey = (): never => {
  throw new IdempotencyConfigError('perRecord: key needs the idempotency middleware in the stack, ' +
    'or a batch of a known source')
}

interface Run { context: Context, signal: AbortSignal, concurrency: number }

/**
 * What `perRecord` schedules of a batch: a claimed record it runs, at its index among the records
 * it was given; a copy that follows its original (record-state.ts: Followers); or a claimed record it was not given,
 * which never runs (see `unmatched`).
 */
type Item<TRecord> = (
  | { kind: 'run', state: ClaimedRecord, index: number, record: TRecord }
  | { kind: 'follow', state: RecordState }
  | { kind: 'not-given', state: ClaimedRecord }
) & { group?: string }

/** With `idempotency` in the stack: each record is settled in the store as soon as its work ends. */
const runBatch = async <TRecord>(
  batch: Batch,
  records: TRecord[],
  fn: (record: TRecord, tools: RecordTools) => unknown,
  run: Run
): Promise<Array<PromiseSettledResult<unknown>>> => {
  const stop = batch.start(run.signal)
  // Each record is given its own invocation's signal, not Middy's (shared by every invocation of a
  // Middy 5 or 6 process).
  run = { ...run, signal: batch.signal }
  const results: Array<PromiseSettledResult<unknown>> = new Array(records.length)
  // Each record runs under its own claim, whatever a middleware inside ours made of the order or
  // of the records themselves: paired by record, then by identifier, never by position.
  const givenAt = new Map<RecordState, number>()
  matchEach(batch.run, records, batch.source).forEach((state, index) => {
    if (typeof state !== 'string') return givenAt.set(state, index)
    const error = unmatched(batch.source, index, state)
    results[index] = rejected(error)
    // Reported by no outcome (the records reported are those delivered): logged, so that why is known.
    batch.config.log.error({ message: error.message, error })
  })
  // The records to run, and, in their group's order, the copies of a record of another group
  // that runs here: a copy waits for its original, and its group behind it (record-state.ts: Followers).
  const items = batch.records.flatMap((state): Array<Item<TRecord>> => {
    const index = givenAt.get(state)
    const group = state.group === undefined ? {} : { group: state.group }
    if (isClaimed(state)) {
      return [index === undefined
        ? { kind: 'not-given', state, ...group }
        : { kind: 'run', state, index, record: records[index] as TRecord, ...group }]
    }
    return Followers.follows(state) ? [{ kind: 'follow', state, ...group }] : []
  })
  try {
    await schedule(items, run.concurrency, {
      closed: () => batch.closed,
      skip: async (item, why) => {
        const result = await batch.skip(item.state, why)
        if (item.kind === 'run') results[item.index] = result
      },
      run: async (item, free) => {
        // A copy does no work: it holds no place while it waits.
        if (item.kind === 'follow') { free(); return await batch.followers.follow(item.state) }
        if (item.kind === 'not-given') {
          free()
          await batch.release(item.state, notGiven(batch.source, item.state.record))
          // Its group stops behind it, as behind any record that failed: order is kept.
          return false
        }
        const { state, index, record } = item
        batch.begin(state)
        const writes: unknown[] = []
        const { key } = state.fate.unit
        const transact = queueTransact(batch.config, key, writes, () => state.fate.phase === 'running')
        const outcome = await settledCall(fn, record, toolsOf(run, transact, () => key))
        // The work is over: its slot goes to the next record once this one's write has its turn
        // at the store (at once while the store has room, so that the writes of records that end
        // together share round trips; never before, so finished work never piles up unwritten).
        // Unless the write is a commit (its transact writes, or the claim of 'transact-only'):
        // that is the work's effect, and keeps the slot until it is done.
        const commits = outcome.status === 'fulfilled' &&
          (writes.length > 0 || state.fate.hold.unclaimed === true)
        await batch.settle(state, outcome, outcome.status === 'fulfilled' ? writes : [], commits ? undefined : free)
        const result = settledOf(state)?.result ?? outcome
        results[index] = result
        return result.status === 'fulfilled'
      }
    })
  } finally {
    stop()
  }
  return results
}

/** A record `perRecord` was given that stands for none of the claimed records: it does not run, under no claim. */
const unmatched = (source: BatchSource, index: number, why: string): IdempotencyConfigError =>
  new IdempotencyConfigError(
    `perRecord did not run record ${index} of those it was given, which stands for none idempotency handed over ` +
    `(it ${why}): it would have run under another record's claim. ${keepThem(source)}`)

/**
 * A claimed record `perRecord` was not given (dropped or replaced by a middleware inside ours):
 * released, never run.
 */
const notGiven = (source: BatchSource, record: unknown): IdempotencyConfigError => new IdempotencyConfigError(
  `perRecord was not given ${source.label(record)}: it did not run, and is released to run again. ` +
  keepThem(source))

const keepThem = (source: BatchSource): string =>
  'A middleware inside idempotency changed the records: keep them, in any order, or copies carrying ' +
  source.identityName

/** Without the middleware: the same scheduling and answer, and no store. */
const runPlain = async <TRecord, TResult>(
  event: unknown,
  records: TRecord[],
  fn: (record: TRecord, tools: RecordTools) => Promise<TResult> | TResult,
  run: Run
): Promise<Array<PromiseSettledResult<TResult>>> => {
  const source = sourceOf(event)
  const groupOf = source?.orderingGroups(records)
  const results: Array<PromiseSettledResult<TResult>> = new Array(records.length)
  const items = records.map((record, index) =>
    ({ record, index, ...(groupOf === undefined ? {} : { group: groupOf(record) }) }))
  const noTransact = (): never => {
    throw new IdempotencyConfigError('transact needs the idempotency middleware, with a DynamoDBStore, in the stack')
  }
  await schedule(items, run.concurrency, {
    closed: () => run.signal.aborted,
    skip: (item, why) => {
      results[item.index] = rejected(heldBackError(why, item.group === undefined ? {} : { group: item.group }))
    },
    run: async ({ record, index }, free) => {
      const keyOf = (): string => source === undefined ? noKey() : defaultKeyOf(source, event, record, run.context)
      const result = await settledCall(fn, record, toolsOf(run, noTransact, keyOf)) as PromiseSettledResult<TResult>
      free()
      results[index] = result
      return result.status === 'fulfilled'
    }
  })
  if (source === undefined) return results
  const ids = records.map((record) =>
    record === null || typeof record !== 'object' ? undefined : identifierOf(source, record))
  return readableByLambda(results, ids)
}

/** `fn(record, tools)` as a settled result: its value, or what it threw. */
const settledCall = async <TRecord>(
  fn: (record: TRecord, tools: RecordTools) => unknown,
  record: TRecord,
  tools: RecordTools
): Promise<PromiseSettledResult<unknown>> => {
  try {
    return fulfilled(await fn(record, tools))
  } catch (error) {
    return rejected(error)
  }
}
