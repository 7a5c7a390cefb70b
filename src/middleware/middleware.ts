import { IdempotencyConfigError } from '../errors.js'
import type { LifecycleConfig } from '../unit/config.js'
import type { IdempotencyRequest } from '../types.js'
import { isDisabled } from './disabled.js'
import type { Adapter, MiddyRequest } from './hooks.js'

/**
 * The Middy middleware object returned by {@link idempotency}.
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
 * The middleware's hooks: `before` picks the hooks of the request's event family (`choose`), which
 * `after` and `onError` then follow for that request. `choose` returns a string when this
 * middleware takes no event of that kind: the refusal, naming what to import instead.
 */
export const middlewareOf = (config: LifecycleConfig, choose: (request: MiddyRequest) => Adapter | string): IdempotencyMiddleware => {
  const chosen = new WeakMap<MiddyRequest, Adapter>()
  const refused = new WeakMap<MiddyRequest, IdempotencyConfigError>()

  const idempotencyBefore = async (request: MiddyRequest): Promise<unknown> => {
    // Off for a local run: nothing claimed, so `after` and `onError` find no hooks and do nothing.
    if (isDisabled(config.log)) return undefined
    const hooks = choose(request)
    if (typeof hooks === 'string') {
      const error = new IdempotencyConfigError(hooks)
      // Logged as well as thrown: a batch middleware's onError may answer the error and hide it.
      config.log.error({ message: error.message, error })
      refused.set(request, error)
      throw error
    }
    chosen.set(request, hooks)
    return hooks.before(request)
  }
  const idempotencyAfter = async (request: MiddyRequest): Promise<void> => chosen.get(request)?.after(request)
  const idempotencyOnError = async (request: MiddyRequest): Promise<void> => {
    const refusal = refused.get(request)
    // An error handler that ran before us (http-error-handler) answers a refusal as a 500
    // response, which Lambda takes as success: a refused batch would be acknowledged unrun.
    if (refusal !== undefined) throw refusal
    return await chosen.get(request)?.onError(request)
  }

  return { before: idempotencyBefore, after: idempotencyAfter, onError: idempotencyOnError }
}
