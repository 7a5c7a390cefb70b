import { IdempotencyStoreError, type StoreOperation } from '../errors.js'
import type { StoreCallOptions } from '../stores/store.js'
import type { LifecycleConfig, StoreDeadline } from './config.js'
import { remainingMs } from './lease.js'

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
