import { IdempotencyConfigError } from '../errors.js'
import { batchModeOf, untakenBatchOf } from '../sources/recognise.js'
import type { IdempotencyOptions, IdempotencyRequest, MiddyRequest } from '../types.js'
import { isDisabled, setUp, type Setup } from '../options.js'

/**
 * The Middy middleware object returned by `idempotency`.
 *
 * @example
 * ```ts
 * const middleware: IdempotencyMiddleware = idempotency({ store })
 * middy().use(middleware)
 * ```
 */
export interface IdempotencyMiddleware {
  before: (request: IdempotencyRequest) => Promise<unknown>
  after: (request: IdempotencyRequest) => Promise<void>
  onError: (request: IdempotencyRequest) => Promise<void>
}

/**
 * The hooks of one kind of event (a batch source, or whole events), which a request follows once
 * `before` chose them.
 */
export interface Hooks {
  before: (request: MiddyRequest) => Promise<unknown>
  after: (request: MiddyRequest) => Promise<void>
  onError: (request: MiddyRequest) => Promise<void>
}

/**
 * What an entry point takes: the batch hooks (those of a request's batch source, or undefined
 * when it is no batch) and the whole-event hooks. An entry names only its own, so that
 * its bundle carries only them.
 */
export interface EntryHooks {
  entry: Entry
  batch?: (setup: Setup) => (request: MiddyRequest) => Hooks | undefined
  event?: (setup: Setup) => Hooks
}

/**
 * The one middleware factory behind the `idempotency` of every entry point. `before` picks the
 * hooks of the request's kind of event, which `after` and `onError` then follow for that request; an
 * event no hooks of this entry take is refused, naming what takes it.
 */
export const idempotencyFor = ({ entry, batch, event }: EntryHooks) =>
  <TEvent = any>(options: IdempotencyOptions<TEvent>): IdempotencyMiddleware => {
    const setup = setUp(options)
    const { mode } = setup.resolved
    if (mode === 'event' ? event === undefined : mode !== 'auto' && batch === undefined) {
      throw new IdempotencyConfigError(refusals.mode(entry, mode))
    }
    const batchHooks = batch?.(setup)
    const eventHooks = event?.(setup)
    const choose = (request: MiddyRequest): Hooks | string => {
      if (mode === 'event') return eventHooks as Hooks
      const hooks = batchHooks?.(request)
      if (hooks !== undefined) return hooks
      const batchMode = batchHooks === undefined ? batchModeOf(request.event) : undefined
      if (batchMode !== undefined) return refusals.batch(entry, batchMode)
      const untaken = untakenBatchOf(request.event)
      if (untaken !== undefined) return refusals.untaken(entry, untaken, eventHooks !== undefined)
      return eventHooks ?? refusals.wholeEvent(entry)
    }

    const chosen = new WeakMap<MiddyRequest, Hooks>()
    const refused = new WeakMap<MiddyRequest, IdempotencyConfigError>()
    const { log } = setup.config
    const idempotencyBefore = async (request: MiddyRequest): Promise<unknown> => {
      // Off for a local run: nothing claimed, so `after` and `onError` find no hooks and do nothing.
      if (isDisabled(log)) return undefined
      const hooks = choose(request)
      if (typeof hooks === 'string') {
        const error = new IdempotencyConfigError(hooks)
        // Logged as well as thrown: a batch middleware's onError may answer the error and hide it.
        log.error({ message: error.message, error })
        refused.set(request, error)
        throw error
      }
      chosen.set(request, hooks)
      return await hooks.before(request)
    }
    const idempotencyAfter = async (request: MiddyRequest): Promise<void> => await chosen.get(request)?.after(request)
    const idempotencyOnError = async (request: MiddyRequest): Promise<void> => {
      const refusal = refused.get(request)
      // An error handler that ran before us (http-error-handler) answers a refusal as a 500
      // response, which Lambda takes as success: a refused batch would be acknowledged unrun.
      if (refusal !== undefined) throw refusal
      return await chosen.get(request)?.onError(request)
    }
    return { before: idempotencyBefore, after: idempotencyAfter, onError: idempotencyOnError }
  }

/**
 * The events an entry point of the package refuses, and why: one table for the three entries, so
 * that each refusal names what takes the event instead (docs/architecture.md: entry points).
 */
export type Entry = 'middy-idempotency' | 'middy-idempotency/batch' | 'middy-idempotency/event'

const TAKES: Record<Entry, string> = {
  'middy-idempotency': '',
  'middy-idempotency/batch': 'SQS, Kinesis, DynamoDB Streams and Kafka batches',
  'middy-idempotency/event': 'whole events'
}

const lead = (entry: Entry): string =>
  entry === 'middy-idempotency'
    ? 'idempotency: this is'
    : `idempotency from '${entry}' takes ${TAKES[entry]}, and this is`

const ONE_UNIT = "set mode: 'event' to take the batch as one unit"

export const refusals = {
  /** A `mode` the entry has no hooks for, refused where the middleware is built. */
  mode: (entry: Entry, mode: string): string =>
    `idempotency from '${entry}' takes ${TAKES[entry]}: mode '${mode}' needs idempotency from 'middy-idempotency' ` +
    `or 'middy-idempotency/${mode === 'event' ? 'event' : 'batch'}'`,
  /** A batch that an entry without the batch hooks meets. */
  batch: (entry: Entry, mode: string): string =>
    `${lead(entry)} a ${mode} batch: import idempotency and perRecord from 'middy-idempotency/batch' ` +
    `(or 'middy-idempotency'), or ${ONE_UNIT}`,
  /** A whole event that an entry without the whole-event hooks meets. */
  wholeEvent: (entry: Entry): string =>
    `${lead(entry)} no batch: import idempotency from 'middy-idempotency/event' (whole events, HTTP) ` +
    "or 'middy-idempotency' (every event)",
  /**
   * A batch no source takes per record (Amazon MQ, DocumentDB, an EventBridge Pipes array): taken
   * whole, one failed record would run its finished neighbours again, so it needs `mode: 'event'`.
   */
  untaken: (entry: Entry, untaken: string, takesWholeEvents: boolean): string =>
    `${lead(entry)} ${untaken}, which no idempotency middleware takes per record: ` +
    `run each record through makeIdempotent() from 'middy-idempotency', or ${ONE_UNIT}` +
    (takesWholeEvents ? '' : " with the idempotency of 'middy-idempotency/event'")
}
