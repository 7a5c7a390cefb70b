import { IdempotencyStoreError, type StoreOperation } from '../errors.js'
import type { StoreCallOptions } from '../stores/store.js'
import type { LifecycleConfig, StoreDeadline } from './config.js'
import { LAMBDA_MAX_TIMEOUT_SECONDS } from '../defaults.js'
import { durableExecutionOf, durableExecutionMaxMs, invocationOf } from './durable.js'
import type { MiddyRequest } from '../types.js'

// Time, for every unit: the deadline and each store call's share of it, the lease, Middy's timeout.

/**
 * The deadline of the invocation whose Lambda context is `context`, less `marginMs` (the
 * `timeoutMarginMs` option): by then every store call has answered or been given up, so that
 * Lambda gets the middleware's answer before it ends the invocation, which it does without a
 * word from us (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html).
 * Without a Lambda context there is no deadline, and no bound.
 */
export const storeDeadline = (context: unknown, marginMs: number): StoreDeadline | undefined => {
  if (remainingMs(context) === undefined) return undefined
  return {
    budgetMs: () => {
      const left = Math.max(0, remainingMs(context) ?? 0)
      // Inside the margin already (the work itself took it): the call is still made, since a
      // completion that lands saves a re-run, but waited for only half of what is left, so that
      // the other half remains to answer.
      return left > marginMs ? left - marginMs : Math.floor(left / 2)
    }
  }
}

/** `config` for one invocation: its store calls bounded by `deadline` (none without one). */
export const withDeadline = (config: LifecycleConfig, deadline: StoreDeadline | undefined): LifecycleConfig =>
  deadline === undefined ? config : { ...config, deadline }

/**
 * Makes the store call `call` within the invocation's deadline (`config.deadline`). A call with
 * no answer by then is given up: it rejects with an `IdempotencyStoreError` that names the
 * operation, the key and how long it waited, and its `signal` aborts, so that a store that
 * passes it on (DynamoDBStore, to the SDK) frees its socket. Every call of one invocation carries
 * the same `invocation`, so that a store that sends calls together groups only those. The request may still land: each
 * caller decides what an unknown outcome means for its record (see where each operation is made).
 *
 * @example
 * ```ts
 * const existing = await withinDeadline(config, 'claim', record.key,
 *   async (bound) => await config.store.claim(record, nowMs, bound))
 * ```
 */
export const withinDeadline = async <T>(
  config: LifecycleConfig,
  operation: StoreOperation,
  key: string,
  call: (bound: StoreCallOptions) => Promise<T>
): Promise<T> => {
  if (config.deadline === undefined) return await call({})
  const abort = new AbortController()
  const started = Date.now()
  const pending = call({ signal: abort.signal, invocation: config.deadline })
  // Measured once the request is on its way, what is left of the invocation is what it may wait.
  const budget = config.deadline.budgetMs()
  // One promise settled by whichever comes first, the answer or the timer (two store calls per
  // record: no race of two more promises). A call given up may still settle: its answer, or its
  // error, is nobody's any more, and no timer outlives its call (it would keep an idle
  // process's event loop alive).
  return await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const waited = Date.now() - started
      const error = new IdempotencyStoreError(operation,
        `${operation} of key ${key} did not answer within ${waited} ms ` +
        "(the invocation's deadline less timeoutMarginMs); " +
        'given up so that Lambda gets its answer in time, the request may still land',
        { key })
      abort.abort(error)
      reject(error)
    }, budget)
    pending.then(
      (value) => { clearTimeout(timer); resolve(value) },
      (error: unknown) => { clearTimeout(timer); reject(error) }
    )
  })
}

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
  return { nowMs, until: nowMs + Math.max(0, remainingMs(context) ?? LAMBDA_MAX_TIMEOUT_MS) }
}

/**
 * True when the invocation has `marginMs` or less left before its deadline. Without a Lambda
 * context there is no deadline, and never is it near.
 */
export const deadlineWithin = (context: unknown, marginMs: number): boolean => {
  const ms = remainingMs(context)
  return ms !== undefined && ms <= marginMs
}

/**
 * `getRemainingTimeInMillis()` of the Lambda context, as every reader of the clock reads it: at
 * most 900 s, the longest a Lambda runs (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html;
 * a harness's `Infinity` would take a lease no one frees, and a store budget over 2^31-1 ms that
 * `setTimeout` runs after 1 ms); 0 or less stays a value; undefined without a context or for NaN.
 */
export const remainingMs = (context: unknown): number | undefined => {
  const ms = rawRemainingMs(context)
  if (typeof ms !== 'number' || Number.isNaN(ms)) return undefined
  return Math.min(ms, LAMBDA_MAX_TIMEOUT_MS)
}

/** Whether `context` is a Lambda context (or holds one): it says a remaining time, whatever time (NaN too). */
export const isLambdaContext = (context: unknown): boolean => rawRemainingMs(context) !== undefined

const rawRemainingMs = (context: unknown): unknown => {
  // Read three times per record (each store call's budget, the timeout judgement): no array, no closure.
  if (typeof (context as WithDeadline)?.getRemainingTimeInMillis === 'function') {
    return (context as Required<NonNullable<WithDeadline>>).getRemainingTimeInMillis()
  }
  // Middy 7's durable execution mode keeps the Lambda context under `lambdaContext`.
  const inner = (context as { lambdaContext?: WithDeadline } | undefined)?.lambdaContext
  return typeof inner?.getRemainingTimeInMillis === 'function' ? inner.getRemainingTimeInMillis() : undefined
}

type WithDeadline = { getRemainingTimeInMillis?: () => unknown } | undefined

/**
 * Middy's `timeoutEarlyInMillis` rejects with this error while the handler may still be
 * working: the lease must be kept (not released, not failed) so no one runs it twice.
 */
export const isMiddyTimeout = (error: unknown): boolean => {
  const e = error as { name?: string, cause?: { package?: string } } | undefined
  return e?.name === 'TimeoutError' && e.cause?.package === '@middy/core'
}

/**
 * Calls `timedOut` when Middy's signal aborts and the timeout is this batch's own; answers the
 * function that stops listening.
 *
 * Middy aborts its signal when the early timeout fires, before the middleware's hooks run.
 * Middy 5 and 6 share one signal between every invocation of a process (Lambda Managed
 * Instances run several at once), and the one that timed out may be any of them, listening or
 * not (its handler had not reached `perRecord` yet). So only a batch whose own deadline is near
 * takes the abort as its own at once; any other is closed by its own invocation's hooks
 * (`closeOnTimeout`), a few microtasks later, when the timeout was its own.
 */
export const watchAbort = (
  signal: AbortSignal,
  context: unknown,
  timeoutMarginMs: number,
  timedOut: (reason: unknown) => void
): () => void => {
  const onAbort = (): void => {
    // Without a Lambda context (a local run) there is no deadline to judge by, nor another invocation.
    if (remainingMs(context) === undefined || deadlineWithin(context, timeoutMarginMs)) timedOut(signal.reason)
  }
  if (signal.aborted) onAbort()
  else signal.addEventListener('abort', onAbort, { once: true })
  return () => { signal.removeEventListener('abort', onAbort) }
}

/*
 * Middy's early timeout, whatever the rest of the stack made of it. Middy runs `onError` hooks innermost
 * first (https://middy.js.org/docs/intro/how-it-works), and `@middy/http-error-handler` *replaces*
 * `request.error` with a plain `{ statusCode: 500 }` before an outer middleware sees it; a custom
 * `timeoutEarlyResponse` may throw any error, or return a response (then `after` runs, not `onError`).
 * So the first error assigned to the request is kept, and the clock decides too.
 */
const firstErrors = new WeakMap<object, { error: unknown }>()

/**
 * Called in `before`: turns `request.error` into an accessor that remembers the first error assigned
 * to it (Middy 5, 6 and 7 all set it with `request.error = e`); reading it gives the latest value.
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
