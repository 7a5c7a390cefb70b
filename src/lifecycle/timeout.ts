import type { MiddyRequest } from '../adapters/adapter.js'

const originals = new WeakMap<object, unknown>()

/** Remembers the first error Middy records for `request`, whatever a later middleware replaces it with. */
export const watchErrors = (request: MiddyRequest): void => {
  let current = request.error
  Object.defineProperty(request, 'error', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (value: unknown) => {
      if (value !== undefined && !originals.has(request)) originals.set(request, value)
      current = value
    }
  })
}

/** What the handler or a middleware really threw. */
export const originalError = (request: MiddyRequest): unknown => originals.has(request) ? originals.get(request) : request.error

/** Middy's early timeout fired, or the Lambda deadline is within `marginMs`. */
export const timedOut = (request: MiddyRequest, marginMs: number, _now: () => number): boolean => {
  const e = originalError(request) as { name?: string, cause?: { package?: string } } | undefined
  if (e?.name === 'TimeoutError' && e.cause?.package === '@middy/core') return true
  type WithDeadline = { getRemainingTimeInMillis?: () => number } | undefined
  const context = request.context as WithDeadline & { lambdaContext?: WithDeadline }
  const owner = [context, context?.lambdaContext].find((c) => typeof c?.getRemainingTimeInMillis === 'function')
  return owner !== undefined && (owner.getRemainingTimeInMillis as () => number).call(owner) <= marginMs
}
