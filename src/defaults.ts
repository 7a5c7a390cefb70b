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

/**
 * How long a record kept FAILED because its work may have taken effect protects, at the least (a
 * result no store can keep, an answer that cannot be read, a transact write refused as invalid):
 * a year and a day. Lambda retries a stream's failed record until it leaves the stream, by default,
 * and a Kinesis stream keeps records up to 365 days; a record that lapsed sooner would run its work
 * again at the next retry. An operator releases it sooner (`middy-idempotency release`).
 * https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html (MaximumRetryAttempts),
 * https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html
 */
export const KEPT_FAILED_SECONDS = 366 * 24 * 3600
