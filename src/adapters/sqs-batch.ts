import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { forEachBounded } from '../bounded.js'
import { IdempotencyConfigError, IdempotencyError, IdempotencyHeldBackError, IdempotencyKeyError, IdempotencyPayloadMismatchError } from '../errors.js'
import { claim } from '../lifecycle/claim.js'
import type { LifecycleConfig, Unit } from '../lifecycle/config.js'
import { isMiddyTimeout, leaseFor, type Lease } from '../lifecycle/lease.js'
import { fulfilled, rejected, type ClaimOutcome } from '../lifecycle/outcome.js'
import { prepareUnit, type Selection } from '../lifecycle/prepare.js'
import { kindOfRefusal, reportOutcome, type OutcomeKind } from '../lifecycle/report.js'
import { complete, fail, keepFailed } from '../lifecycle/settle.js'
import type { IdempotencyRecord } from '../stores/store.js'
import type { Adapter, MiddyRequest } from './adapter.js'

/** One record of the batch and what became of it. */
interface RecordState {
  record: SQSRecord
  /** Undefined when no key could be taken (the outcome then says why). */
  unit?: Unit
  /** `copy`: the same key earlier in this batch; it shares that record's result (DESIGN §3.2). */
  outcome?: ClaimOutcome | { kind: 'copy', of: RecordState }
  /** For a record that ran: what it reports once settled, and what became of it. */
  result?: PromiseSettledResult<unknown>
  settledAs?: OutcomeKind
}

interface BatchState {
  event: SQSEvent
  records: RecordState[]
  settled: boolean
}

/** The records this invocation claimed and hands to the handler. */
const claimed = (batch: BatchState): RecordState[] => batch.records.filter((s) => s.outcome?.kind === 'run')

/** True for an event whose records come from SQS (an empty `Records` counts: there is nothing to do). */
export const isSqsEvent = (event: unknown): event is SQSEvent => {
  const records = (event as { Records?: unknown } | null)?.Records
  return Array.isArray(records) && (records.length === 0 || records.some((r) => r?.eventSource === 'aws:sqs'))
}

// BatchGetItem reads at most 100 keys per request:
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
const READ_SLICE = 100

// A FIFO queue's name ends in .fifo. Standard "fair" queues carry a MessageGroupId too but
// promise no order, so the group id alone only counts when the record has no source ARN.
const isFifo = (records: readonly SQSRecord[]): boolean =>
  records.some((r) => typeof r.eventSourceARN === 'string' ? r.eventSourceARN.endsWith('.fifo') : r.attributes?.MessageGroupId !== undefined)

/**
 * SQS batch mode (DESIGN §3): each record is its own unit of work. The handler sees
 * only the records it must run; afterwards the original `Records` come back and the
 * response is rebuilt, index-aligned with them, for `@middy/sqs-partial-batch-failure`.
 */
export const sqsBatchAdapter = (config: LifecycleConfig, selection: Selection, concurrency: number): Adapter => {
  const batches = new WeakMap<MiddyRequest, BatchState>()

  const prepare = (record: SQSRecord, context: unknown): RecordState => {
    if (record === null || typeof record !== 'object' || typeof record.messageId !== 'string') {
      throw new IdempotencyConfigError('idempotency: every SQS record needs a string messageId (it is how a failure is reported)')
    }
    const attempt = Number(record.attributes?.ApproximateReceiveCount)
    try {
      return { record, unit: prepareUnit(selection, record, context, Number.isSafeInteger(attempt) && attempt > 0 ? attempt : 1, `record ${record.messageId}`) }
    } catch (error) {
      return { record, outcome: { kind: 'rejected', error: error as IdempotencyKeyError } }
    }
  }

  /**
   * Redeliveries are probably duplicates: one consistent read of up to 100 keys costs less
   * than 100 refused writes (and a read unit is a fifth of the price of a write unit). Read in
   * slices of BatchGetItem's 100 keys, within `slots` requests in flight.
   */
  const readProbableDuplicates = async (probable: RecordState[], slots: number): Promise<Map<string, IdempotencyRecord>> => {
    const found = new Map<string, IdempotencyRecord>()
    const read = config.store.read?.bind(config.store)
    if (read === undefined || probable.length === 0) return found
    const slices: string[][] = []
    for (let i = 0; i < probable.length; i += READ_SLICE) slices.push(probable.slice(i, i + READ_SLICE).map((s) => (s.unit as Unit).key))
    await forEachBounded(slices, slots, async (keys) => {
      try {
        for (const [key, record] of await read(keys)) found.set(key, record)
      } catch (error) {
        // Reading is only an optimisation: the claims decide, one request each.
        config.logger.warn({ message: 'idempotency: read before claim failed; claiming instead', error })
      }
    })
    return found
  }

  const claimAll = async (states: RecordState[], lease: Lease): Promise<void> => {
    const fifo = isFifo(states.map((s) => s.record))
    const primaries: RecordState[] = []
    const byKey = new Map<string, RecordState>()
    for (const state of states) {
      if (state.unit === undefined) continue
      // In FIFO, a copy shares its original's fate only within its own message group: across
      // groups it is claimed on its own (and meets the original's claim), so that each group
      // keeps its order whatever happens in the other.
      const slot = fifo ? `${state.record.attributes?.MessageGroupId ?? ''}\u0000${state.unit.key}` : state.unit.key
      const primary = byKey.get(slot)
      if (primary === undefined) {
        byKey.set(slot, state)
        primaries.push(state)
      } else if (primary.unit?.payloadHash !== state.unit.payloadHash) {
        state.outcome = { kind: 'rejected', error: new IdempotencyPayloadMismatchError(state.unit.key) }
      } else {
        state.outcome = { kind: 'copy', of: primary }
      }
    }
    const isProbableDuplicate = (s: RecordState): boolean => (s.unit as Unit).attempt > 1 && config.cache?.get((s.unit as Unit).key, lease.nowMs) === undefined
    const probable = primaries.filter(isProbableDuplicate)
    let standing = new Map<string, IdempotencyRecord>()
    const claimOne = async (state: RecordState): Promise<void> => {
      const unit = state.unit as Unit
      state.outcome = await claim(config, unit, lease, standing.get(unit.key))
    }

    if (!fifo) {
      const probableSet = new Set(probable)
      const first = primaries.filter((s) => !probableSet.has(s))
      if (first.length > 0 && probable.length > 0 && concurrency > 1) {
        // First deliveries need no read: claim them while the redeliveries are being read.
        await Promise.all([
          forEachBounded(first, concurrency - 1, claimOne),
          readProbableDuplicates(probable, 1).then((found) => { standing = found })
        ])
      } else {
        standing = await readProbableDuplicates(probable, concurrency)
        await forEachBounded(first, concurrency, claimOne)
      }
      await forEachBounded(probable, concurrency, claimOne)
      return
    }
    // FIFO (DESIGN §3.3): a group is claimed in order and stops at its first record that cannot run.
    standing = await readProbableDuplicates(probable, concurrency)
    const groups = new Map<string, RecordState[]>()
    for (const state of states) {
      const group = state.record.attributes?.MessageGroupId ?? ''
      const members = groups.get(group)
      if (members === undefined) groups.set(group, [state])
      else members.push(state)
    }
    await forEachBounded([...groups], concurrency, async ([group, members]) => {
      let blocker: RecordState | undefined
      for (const state of members) {
        if (blocker !== undefined) {
          if (state.outcome === undefined || state.outcome.kind === 'copy') {
            state.outcome = { kind: 'rejected', error: new IdempotencyHeldBackError(group, blocker.record.messageId, state.unit?.key) }
          }
          continue
        }
        if (state.outcome === undefined) await claimOne(state)
        if (state.outcome?.kind === 'rejected') blocker = state
      }
    })
  }

  const resultOf = (state: RecordState): PromiseSettledResult<unknown> => {
    const outcome = state.outcome as NonNullable<RecordState['outcome']>
    switch (outcome.kind) {
      case 'copy': return resultOf(outcome.of)
      case 'replay': return fulfilled(outcome.response)
      case 'rejected': return rejected(outcome.error)
      case 'run': return state.result ?? rejected(new IdempotencyError('the record was claimed but never settled', { key: state.unit?.key }))
    }
  }

  /** Tells `onOutcome` what became of every record of the batch, once it is known. */
  const reportBatch = (batch: BatchState, timedOut = false): void => {
    if (config.onOutcome === undefined) return
    for (const state of batch.records) {
      const result = resultOf(state)
      const error = result.status === 'rejected' ? result.reason : undefined
      let kind: OutcomeKind
      switch (state.outcome?.kind) {
        case 'copy': kind = 'in-batch-copy'; break
        case 'replay': kind = 'replayed'; break
        case 'run': kind = timedOut ? 'timed-out' : state.settledAs ?? 'failed'; break
        default: kind = kindOfRefusal(error)
      }
      reportOutcome(config.onOutcome, config.logger, {
        kind, messageId: state.record.messageId, ...(state.unit === undefined ? {} : { key: state.unit.key }), ...(error === undefined ? {} : { error })
      })
    }
  }

  /**
   * The response index-aligned with the original records: the allSettled array the handler
   * returned, or else Lambda's own `{ batchItemFailures }`. The latter also carries the
   * settled results under non-enumerable indexes: `@middy/sqs-partial-batch-failure`, if it
   * is in the stack, reads `response[i]` and reports exactly, while Lambda, which receives
   * `JSON.stringify(response)`, sees only `batchItemFailures`.
   */
  const respond = (states: RecordState[], form: 'array' | 'native'): unknown => {
    const results = states.map(resultOf)
    if (form === 'array') return results
    const response = { batchItemFailures: states.filter((_, i) => results[i]?.status === 'rejected').map((s) => ({ itemIdentifier: s.record.messageId })) }
    results.forEach((result, i) => { Object.defineProperty(response, i, { value: result, enumerable: false }) })
    return response
  }

  const before = async (request: MiddyRequest): Promise<unknown> => {
    const event = request.event as SQSEvent
    if (!isSqsEvent(event)) {
      const error = new IdempotencyConfigError("idempotency: mode 'sqs' expects an SQS event with a Records array of aws:sqs records")
      // Logged as well as thrown: @middy/sqs-partial-batch-failure's onError turns an event
      // without Records into an empty batchItemFailures, which would hide it.
      config.logger.error({ message: error.message, error })
      throw error
    }
    const lease = leaseFor(request.context, config.now)
    const states = event.Records.map((record) => prepare(record, request.context))
    // Registered before claiming, so that onError can release whatever was claimed should anything below throw.
    const batch: BatchState = { event, records: states, settled: false }
    batches.set(request, batch)
    await claimAll(states, lease)
    const run = claimed(batch)
    if (run.length === 0) {
      // Nothing to run, so the handler must not be called. Returning early skips every
      // `after` hook, the batch middleware's too, so the answer is already in Lambda's
      // own `{ batchItemFailures }` shape (DESIGN §3.4, §3.7).
      batch.settled = true
      for (const state of states) {
        const result = resultOf(state)
        if (result.status === 'rejected') config.logger.warn({ message: 'idempotency: record reported failed', messageId: state.record.messageId, error: result.reason })
      }
      reportBatch(batch)
      return respond(states, 'native')
    }
    request.event = { ...event, Records: run.map((s) => s.record) }
    return undefined
  }

  const after = async (request: MiddyRequest): Promise<void> => {
    const batch = batches.get(request)
    if (batch === undefined || batch.settled) return
    request.event = batch.event
    const run = claimed(batch)
    batch.settled = true
    let answer: ReturnType<typeof interpret>
    try {
      answer = interpret(request.response, run)
    } catch (error) {
      // The handler ran but its answer cannot be read: some records may have taken effect.
      // Keep them FAILED rather than release them to run again; the error goes on to onError.
      config.logger.error({ message: (error as Error).message, error })
      await forEachBounded(run, concurrency, async (state) => {
        await keepFailed(config, state.unit as Unit, (state.outcome as { leaseToken: string }).leaseToken, error)
        state.result = rejected(error)
        state.settledAs = 'failed'
      })
      reportBatch(batch)
      throw error
    }
    const { form, results } = answer
    await forEachBounded(run, concurrency, async (state, i) => {
      const result = results[i] as PromiseSettledResult<unknown>
      const { leaseToken } = state.outcome as { leaseToken: string }
      const unit = state.unit as Unit
      if (result.status === 'fulfilled') {
        const settlement = await complete(config, unit, leaseToken, result.value)
        state.result = settlement.result
        state.settledAs = settlement.kind
      } else {
        await fail(config, unit, leaseToken, result.reason)
        state.result = result
        state.settledAs = 'failed'
      }
    })
    request.response = respond(batch.records, form)
    reportBatch(batch)
  }

  const onError = async (request: MiddyRequest): Promise<void> => {
    const batch = batches.get(request)
    if (batch === undefined) return
    request.event = batch.event
    if (batch.settled) return
    batch.settled = true
    if (isMiddyTimeout(request.error)) {
      // The handler may still be working: keep every lease; it lapses with this invocation.
      config.logger.warn({ message: 'idempotency: timed out; leases kept until they lapse', keys: claimed(batch).map((s) => s.unit?.key) })
      reportBatch(batch, true)
      return
    }
    await forEachBounded(claimed(batch), concurrency, async (state) => {
      await fail(config, state.unit as Unit, (state.outcome as { leaseToken: string }).leaseToken, request.error)
      state.result = rejected(request.error)
      state.settledAs = 'failed'
    })
    reportBatch(batch)
  }

  return { before, after, onError }
}

/** Maps the handler's answer back onto the records it was given (DESIGN §3.5). */
const interpret = (response: unknown, run: RecordState[]): { form: 'array' | 'native', results: Array<PromiseSettledResult<unknown>> } => {
  if (Array.isArray(response)) {
    if (response.length !== run.length) {
      throw new IdempotencyConfigError(`idempotency: the handler returned ${response.length} results for the ${run.length} records it was given; ` +
        'return Promise.allSettled(event.Records.map(...)) or { batchItemFailures }')
    }
    return { form: 'array', results: response.map(asSettled) }
  }
  const failures = (response as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures
  if (Array.isArray(failures)) {
    const failed = new Set(failures.map((f) => (f as { itemIdentifier?: unknown } | null)?.itemIdentifier))
    return {
      form: 'native',
      results: run.map((s) => failed.has(s.record.messageId)
        ? rejected(new Error(`record ${s.record.messageId} was reported in batchItemFailures by the handler`))
        : fulfilled(undefined))
    }
  }
  // No per-record answer (undefined, or anything else): Lambda reads that as "all succeeded".
  return { form: 'native', results: run.map(() => fulfilled(undefined)) }
}

/** An entry of `Promise.allSettled` has exactly `status` and `value`, or `status` and `reason`; anything else is a plain result. */
const asSettled = (entry: unknown): PromiseSettledResult<unknown> => {
  if (entry === null || typeof entry !== 'object') return fulfilled(entry)
  const keys = Object.keys(entry)
  const { status } = entry as { status?: unknown }
  const settled = keys.length === 2 && ((status === 'fulfilled' && keys.includes('value')) || (status === 'rejected' && keys.includes('reason')))
  return settled ? entry as PromiseSettledResult<unknown> : fulfilled(entry)
}
