import type { FailurePolicy } from './types.js'

/**
 * Every option's default, declared once for the middleware, `perRecord` and `makeIdempotent`.
 * The TSDoc of each option in types.ts states the same value (the docs tests hold them together).
 */
export const defaults = {
  expiresAfterSeconds: 3600,
  onFailure: 'delete' as FailurePolicy,
  mode: 'auto' as const,
  /** Store requests at once, and records run at once by `perRecord`, unless told otherwise. */
  maxStoreRequests: 50,
  localCacheSize: 0,
  clockSkewMs: 0,
  timeoutMarginMs: 1000,
  effects: 'any' as const,
  now: Date.now
}

/**
 * The longest a Lambda function runs, 15 minutes: how long a lease lasts when no Lambda context
 * says when the invocation ends (tests, local runs, `makeIdempotent` without `leaseSeconds`).
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
 */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900
