import { LAMBDA_MAX_TIMEOUT_SECONDS } from '../defaults.js'
import { compileSelector, type Select } from '../keys/selector.js'
import type { Selection } from '../keys/prepare.js'
import { isDisabled, lifecycleConfig } from '../options.js'
import { durableExecutionOf } from '../lifecycle/durable.js'
import { deadlineWithin, isLambdaContext, leaseFor, remainingMs, type Lease } from '../lifecycle/deadline.js'
import { fulfilled, rejected } from '../lifecycle/outcome.js'
import { wholeEventLifecycle } from '../lifecycle/whole-event.js'
import { checkOptions, type MakeIdempotentOptions } from './options.js'

export type { MakeIdempotentOptions }

/**
 * The Lambda context among the arguments (or a durable context holding one as `lambdaContext`), if any:
 * found by its method, whatever time it answers, since it also scopes the key (its tenant).
 */
const lambdaContextOf = (args: readonly unknown[]): unknown =>
  args.find((arg) => typeof arg === 'object' && arg !== null && isLambdaContext(arg))

/**
 * Makes any async function idempotent, outside Middy, with the middleware's lifecycle: the first
 * call with a key claims it (a fenced lease), runs `fn` and stores its result; a later call
 * with the same key returns the stored result (as JSON gives it back) without running `fn`; a
 * call while the first still runs rejects with `IdempotencyInProgressError`; a failure follows
 * `onFailure`.
 *
 * The lease: when an argument is a Lambda context (it has `getRemainingTimeInMillis`, or holds
 * one as `lambdaContext`, as a durable execution's context does), the lease ends at that
 * invocation's deadline (or after `leaseSeconds`, when sooner); otherwise after `leaseSeconds`.
 *
 * @example
 * ```ts
 * import { makeIdempotent, MemoryStore } from 'middy-idempotency'
 *
 * const chargeOnce = makeIdempotent(async (order: { id: string, cents: number }) => ({ charged: order.cents }), {
 *   store: new MemoryStore(), key: 'id', leaseSeconds: 60
 * })
 * await chargeOnce({ id: 'o-1', cents: 500 }) // runs
 * await chargeOnce({ id: 'o-1', cents: 500 }) // returns { charged: 500 } without running
 * ```
 */
export const makeIdempotent = <TArgs extends unknown[], TResult>(
  fn: (...args: TArgs) => Promise<TResult> | TResult,
  options: MakeIdempotentOptions<TArgs>
): ((...args: TArgs) => Promise<Awaited<TResult>>) => {
  if (typeof fn !== 'function') throw new TypeError('makeIdempotent: fn must be a function')
  const resolved = checkOptions(options)
  // The middleware's lifecycle, built alike; a failure within `timeoutMarginMs` (its default) of
  // the invocation's deadline may be the runtime cutting the work short while a request of it is
  // out: the lease is kept, as the middleware keeps it.
  const config = lifecycleConfig(resolved)
  const { log, now } = config
  const { timeoutMarginMs } = resolved
  const selection: Selection = {
    namespace: resolved.namespace,
    key: selectorOf(options.key, 'key'),
    keyName: typeof options.key === 'string'
      ? `key path "${options.key}"`
      : options.key === undefined ? 'the first argument' : 'the key function',
    ...(options.payload === false ? {} : { payload: selectorOf(options.payload, 'payload') })
  }
  // Without a Lambda context and without `leaseSeconds`: the longest a Lambda function runs.
  const leaseMs = (options.leaseSeconds ?? LAMBDA_MAX_TIMEOUT_SECONDS) * 1000
  const label = `${fn.name === '' ? 'function' : fn.name} call`
  const lifecycle = wholeEventLifecycle(config, selection, label, timeoutMarginMs)

  // A function, not an arrow: wrapped as a method (`obj.charge = makeIdempotent(...)`), `fn` is called
  // with the object the wrapper was called on, as it would have been unwrapped.
  return async function (this: unknown, ...args: TArgs): Promise<Awaited<TResult>> {
    if (isDisabled(log)) return await fn.apply(this, args)
    const context = lambdaContextOf(args)
    const nowMs = now()
    const remaining = context === undefined ? undefined : remainingMs(context)
    // In a durable execution the execution owns the record, as in the middleware: each replay
    // calls the function again and must carry on as the owner of its own claim.
    const lease: Lease = durableExecutionOf(context) !== undefined
      ? leaseFor(context, () => nowMs)
      : { nowMs, until: nowMs + Math.max(0, Math.min(leaseMs, remaining ?? Infinity)) }
    // As in the middleware, the unit's context is the Lambda context (whatever it says of the
    // invocation scopes the key alike, and bounds the store calls by its deadline).
    const admission = await lifecycle.admit(args, context, lease)
    if (admission.kind === 'replay') return admission.response as Awaited<TResult>
    let result: PromiseSettledResult<unknown>
    try {
      result = fulfilled(await fn.apply(this, args))
    } catch (error) {
      result = rejected(error)
    }
    const settled = (await lifecycle.settle(admission, result, () => deadlineWithin(context, timeoutMarginMs))).result
    if (settled.status === 'rejected') throw settled.reason
    return settled.value as Awaited<TResult>
  }
}

/** A `key` or `payload` option as a function of the arguments array: a path reads into the first argument. */
const selectorOf = (selector: string | ((...args: any[]) => unknown) | undefined, what: string): Select => {
  if (selector === undefined) return (args) => (args as unknown[])[0]
  if (typeof selector === 'string') {
    const select = compileSelector(selector, what)
    return (args) => select((args as unknown[])[0], undefined)
  }
  return compileSelector((args) => selector(...(args as unknown[])), what)
}
