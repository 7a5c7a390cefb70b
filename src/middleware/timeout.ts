import type { MiddyRequest } from '../types.js'
import { deadlineWithin, isMiddyTimeout } from '../lifecycle/deadline.js'

/**
 * Recognising Middy's early timeout whatever the rest of the stack made of it.
 *
 * Middy runs `onError` hooks innermost first (https://middy.js.org/docs/intro/how-it-works), and
 * `@middy/http-error-handler` *replaces* `request.error` with a plain `{ statusCode: 500 }`
 * object before an outer middleware sees it; a custom `timeoutEarlyResponse` may throw any error
 * or return a response, in which case `after` runs instead of `onError`. So the error's identity
 * cannot be trusted: the first error assigned to the request is kept, and the clock decides too.
 */

const firstErrors = new WeakMap<object, { error: unknown }>()

/**
 * Called in `before`: turns `request.error` into an accessor that remembers the first error
 * assigned to it. Middy 5, 6 and 7 all set it with `request.error = e` (the error of the
 * handler or of a middleware), and later middlewares overwrite it the same way; reading it
 * still gives the latest value, so nobody else sees a difference.
 *
 * @example
 * ```ts
 * const before = async (request: MiddyRequest) => { watchErrors(request) }
 * ```
 */
export const watchErrors = (request: MiddyRequest): void => {
  const descriptor = Object.getOwnPropertyDescriptor(request, 'error')
  if (descriptor !== undefined && (descriptor.configurable === false || descriptor.get !== undefined)) return
  let current = request.error
  if (current !== undefined) firstErrors.set(request, { error: current })
  Object.defineProperty(request, 'error', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (error: unknown) => {
      if (error !== undefined && !firstErrors.has(request)) firstErrors.set(request, { error })
      current = error
    }
  })
}

/**
 * What the handler or a middleware really threw: the first error assigned to the request
 * since {@link watchErrors}, else `request.error` as it is now.
 *
 * @example
 * ```ts
 * const onError = async (request: MiddyRequest) => {
 *   await lifecycle.settle(running, rejected(originalError(request)), () => false)
 * }
 * ```
 */
export const originalError = (request: MiddyRequest): unknown =>
  firstErrors.has(request) ? firstErrors.get(request)?.error : request.error

/**
 * True when this invocation ran out of time: the original error is Middy's `TimeoutError`
 * (`name === 'TimeoutError'`, `cause.package === '@middy/core'`), or the Lambda context (also
 * `context.lambdaContext`, Middy 7's durable mode) has `marginMs` or less left, whatever
 * error or response the stack produced.
 *
 * Why the clock may decide: keeping a lease is harmless when the deadline is that close,
 * since the lease ends at the deadline anyway (it is `now + getRemainingTimeInMillis()`);
 * releasing one whose handler still runs lets a retry run the payment twice. So set
 * `timeoutMarginMs` to at least Middy's `timeoutEarlyInMillis`. Without a Lambda context there
 * is no deadline, and only the error counts.
 *
 * @example
 * ```ts
 * if (timedOut(request, 1000)) return // keep the lease: the handler may still be running
 * ```
 */
export const timedOut = (request: MiddyRequest, marginMs: number): boolean =>
  isMiddyTimeout(originalError(request)) || deadlineWithin(request.context, marginMs)
