import { LAMBDA_MAX_TIMEOUT_SECONDS } from '../defaults.js'
import { durableExecutionOf, durableExecutionMaxMs, invocationOf } from './durable.js'

/**
 * The lease: from `nowMs` until `until` (epoch ms), the Lambda's own deadline. `owner`: the
 * durable execution (its ARN) that holds it across its invocations, when there is one, and
 * `invocation`, the object standing for this invocation of it (see `nthClaim`).
 * `rerunFinished`: in a durable execution, a record this very call finished in an earlier
 * invocation runs its work again instead of replaying its stored outcome (a batch: see `claim`).
 */
export interface Lease { nowMs: number, until: number, owner?: string, invocation?: object, rerunFinished?: true }

// Without a Lambda context (tests, local runs) the lease is the longest a Lambda can run.
const LAMBDA_MAX_TIMEOUT_MS = LAMBDA_MAX_TIMEOUT_SECONDS * 1000

/**
 * The lease lasts as long as this invocation can: `now + getRemainingTimeInMillis()`.
 * A remaining time of 0 is a real value (a lease that has already lapsed), not "no context".
 * In a durable execution it lasts as long as the execution may run, whatever invocation
 * claims it: the execution is its owner (docs/lambda-modes.md). `invokedBy`: what invoked the
 * function, when the event says (a batch comes from an event source mapping).
 */
export const leaseFor = (context: unknown, now: () => number, invokedBy?: 'event-source-mapping'): Lease => {
  const nowMs = now()
  const owner = durableExecutionOf(context)
  if (owner !== undefined) {
    return {
      nowMs, until: nowMs + durableExecutionMaxMs(invokedBy), owner, invocation: invocationOf(context as object)
    }
  }
  const ms = remainingMs(context) ?? LAMBDA_MAX_TIMEOUT_MS
  return { nowMs, until: nowMs + (Number.isFinite(ms) ? Math.max(0, ms) : LAMBDA_MAX_TIMEOUT_MS) }
}

/**
 * True when the invocation has `marginMs` or less left before its deadline. Without a Lambda
 * context there is no deadline, and never is it near.
 */
export const deadlineWithin = (context: unknown, marginMs: number): boolean => {
  const ms = remainingMs(context)
  return ms !== undefined && ms <= marginMs
}

/** `getRemainingTimeInMillis()` of the Lambda context, or undefined without one. */
export const remainingMs = (context: unknown): number | undefined => {
  // Read three times per record (each store call's budget, the timeout judgement): no array, no closure.
  if (typeof (context as WithDeadline)?.getRemainingTimeInMillis === 'function') {
    return (context as Required<NonNullable<WithDeadline>>).getRemainingTimeInMillis()
  }
  // Middy 7's durable execution mode keeps the Lambda context under `lambdaContext`.
  const inner = (context as { lambdaContext?: WithDeadline } | undefined)?.lambdaContext
  return typeof inner?.getRemainingTimeInMillis === 'function' ? inner.getRemainingTimeInMillis() : undefined
}

type WithDeadline = { getRemainingTimeInMillis?: () => number } | undefined

/**
 * Middy's `timeoutEarlyInMillis` rejects with this error while the handler may still be
 * working: the lease must be kept (not released, not failed) so no one runs it twice.
 */
export const isMiddyTimeout = (error: unknown): boolean => {
  const e = error as { name?: string, cause?: { package?: string } } | undefined
  return e?.name === 'TimeoutError' && e.cause?.package === '@middy/core'
}
