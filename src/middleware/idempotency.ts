import { IdempotencyConfigError } from '../errors.js'
import { batchModeOf, untakenBatchOf } from '../sources/recognise.js'
import type { IdempotencyOptions, IdempotencyRequest, MiddyRequest } from '../types.js'
import { isDisabled } from '../disabled.js'
import { refusals, type Entry } from './refusals.js'
import { setUp, type Setup } from './setup.js'

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
 * The hooks of one family of events (a batch source, or whole events), which a request follows once
 * `before` chose them.
 */
export interface Hooks {
  before: (request: MiddyRequest) => Promise<unknown>
  after: (request: MiddyRequest) => Promise<void>
  onError: (request: MiddyRequest) => Promise<void>
}

/**
 * What an entry point takes: the batch family (the hooks of a request's batch source, or
 * undefined when it is no batch) and the whole-event family. An entry names only its own, so that
 * its bundle carries only them.
 */
export interface Families {
  entry: Entry
  batch?: (setup: Setup) => (request: MiddyRequest) => Hooks | undefined
  event?: (setup: Setup) => Hooks
}

/**
 * The one middleware factory behind the `idempotency` of every entry point. `before` picks the
 * hooks of the request's family, which `after` and `onError` then follow for that request; an
 * event no family of this entry takes is refused, naming what takes it.
 */
export const idempotencyFor = ({ entry, batch, event }: Families) =>
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
