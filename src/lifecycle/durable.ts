import { createHash } from 'node:crypto'

// The execution's own timeout (`DurableConfig.ExecutionTimeout`) is configuration of the
// function, not part of the invocation, so the lease takes the longest it may be, one 366-day
// year: https://docs.aws.amazon.com/lambda/latest/api/API_DurableConfig.html
export const DURABLE_EXECUTION_MAX_MS = 31_622_400 * 1000

// An execution an event source mapping started may run no longer than the function's longest
// timeout: 15 minutes, 90 on Lambda Managed Instances (the longer bound serves both):
// https://docs.aws.amazon.com/lambda/latest/dg/durable-invoking-esm.html
export const DURABLE_ESM_EXECUTION_MAX_MS = 90 * 60 * 1000

/**
 * The longest a durable execution may run: bounded by the event source mapping that started
 * it, if one did, else by the longest execution timeout.
 *
 * @example
 * ```ts
 * durableExecutionMaxMs('event-source-mapping') // 5_400_000
 * ```
 */
export const durableExecutionMaxMs = (invokedBy?: 'event-source-mapping'): number =>
  invokedBy === 'event-source-mapping' ? DURABLE_ESM_EXECUTION_MAX_MS : DURABLE_EXECUTION_MAX_MS

/**
 * The ARN of the durable execution this context belongs to, or undefined outside one. The
 * durable SDK's context carries it as `executionContext.durableExecutionArn` (the context Middy
 * 7's `executionModeDurableContext` hands to middlewares, and what a handler wrapped by
 * `withDurableExecution` receives).
 *
 * @example
 * ```ts
 * durableExecutionOf({ executionContext: { durableExecutionArn: 'arn:aws:lambda:...' } }) // 'arn:aws:lambda:...'
 * ```
 */
export const durableExecutionOf = (context: unknown): string | undefined => {
  const arn = (context as { executionContext?: { durableExecutionArn?: unknown } } | undefined)
    ?.executionContext?.durableExecutionArn
  return typeof arn === 'string' && arn !== '' ? arn : undefined
}

/**
 * The lease token of a durable execution's `nth` claim on a key in an invocation: the same in
 * every invocation of the execution, so that a replay meets its own claim and carries on as its
 * owner; another execution's differs, and so does another claim of the same execution on the
 * same key (the same item twice in one order). UUID-shaped (36 characters), as DynamoDB's
 * `ClientRequestToken`, which a commit derives from it, allows no more. The first claim's token
 * is the one earlier versions gave every claim, so records in flight across an upgrade match.
 *
 * @example
 * ```ts
 * ownerToken('arn:aws:lambda:...:durable-execution/x/y', 'payments#ab12') // 'c0ffee12-...' every time
 * ```
 */
export const ownerToken = (owner: string, key: string, nth = 1): string => {
  const hash = createHash('sha256').update(owner).update('\n').update(key)
  if (nth > 1) hash.update(`\n${nth}`)
  const hex = hash.digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

// The claims each invocation has made, per key. Keyed by the invocation's own Lambda context
// object, so that nothing of one invocation is shared with another (Lambda Managed Instances run
// several in one process), and forgotten with it.
const claimsOf = new WeakMap<object, Map<string, number>>()

/**
 * Counts a claim on `key` in `invocation` and answers its rank: 1 for the first. A durable
 * execution replays its code from the top in every invocation, calling in the same order, so the
 * nth claim on a key in one invocation is the nth in every other: the same call.
 *
 * @example
 * ```ts
 * nthClaim(context.lambdaContext, 'payments#ab12') // 1, then 2 for a second call with that key
 * ```
 */
export const nthClaim = (invocation: object, key: string): number => {
  let claims = claimsOf.get(invocation)
  if (claims === undefined) {
    claims = new Map()
    claimsOf.set(invocation, claims)
  }
  const nth = (claims.get(key) ?? 0) + 1
  claims.set(key, nth)
  return nth
}

/**
 * The object that stands for one invocation of a durable execution: the Lambda context the
 * durable SDK keeps as `lambdaContext` (the same for its child contexts), else the context itself.
 */
export const invocationOf = (context: object): object => {
  const inner = (context as { lambdaContext?: unknown }).lambdaContext
  return typeof inner === 'object' && inner !== null ? inner : context
}
