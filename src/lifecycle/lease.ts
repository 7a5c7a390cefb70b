/** The lease: from `nowMs` until `until` (epoch ms), the Lambda's own deadline. */
export interface Lease { nowMs: number, until: number }

// Without a Lambda context (tests, local runs) the lease is the longest a Lambda can run:
// https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
const LAMBDA_MAX_TIMEOUT_MS = 15 * 60 * 1000

/**
 * The lease lasts as long as this invocation can: `now + getRemainingTimeInMillis()`.
 * A remaining time of 0 is a real value (a lease that has already lapsed), not "no context".
 */
export const leaseFor = (context: unknown, now: () => number): Lease => {
  const nowMs = now()
  type WithDeadline = { getRemainingTimeInMillis?: () => number } | undefined
  // Middy 7's durable execution mode keeps the Lambda context under `lambdaContext`.
  const owner = [context as WithDeadline, (context as { lambdaContext?: WithDeadline } | undefined)?.lambdaContext]
    .find((c) => typeof c?.getRemainingTimeInMillis === 'function')
  const ms = owner === undefined ? LAMBDA_MAX_TIMEOUT_MS : (owner.getRemainingTimeInMillis as () => number).call(owner)
  return { nowMs, until: nowMs + (Number.isFinite(ms) ? Math.max(0, ms) : LAMBDA_MAX_TIMEOUT_MS) }
}

/**
 * Middy's `timeoutEarlyInMillis` rejects with this error while the handler may still be
 * working: the lease must be kept (not released, not failed) so no one runs it twice.
 */
export const isMiddyTimeout = (error: unknown): boolean => {
  const e = error as { name?: string, cause?: { package?: string } } | undefined
  return e?.name === 'TimeoutError' && e.cause?.package === '@middy/core'
}
