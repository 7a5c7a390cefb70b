import { IdempotencyConfigError } from '../errors.js'
import { resolveOptions, type ResolvedOptions } from '../options.js'
import { refuseUnknownOptions } from '../unknown-options.js'
import type { FailurePolicy, IdempotencyLogger, IdempotencyStore, LogLevel, OutcomeReport } from '../types.js'

/**
 * Options of {@link makeIdempotent}: the middleware's, where they apply to one function call.
 *
 * @example
 * ```ts
 * const options: MakeIdempotentOptions<[order: { id: string }]> = {
 *   store: new MemoryStore(),
 *   key: 'id',
 *   leaseSeconds: 60
 * }
 * ```
 */
export interface MakeIdempotentOptions<TArgs extends unknown[] = unknown[]> {
  /** Where records are kept: `DynamoDBStore` or `RedisStore` in production, `MemoryStore` in tests. Required. */
  store: IdempotencyStore<any>
  /**
   * What identifies a call: a path into the first argument (`'order.id'`; JSON strings met on the
   * way are parsed) or a function of the arguments. The selection is hashed. [the first argument]
   */
  key?: string | ((...args: TArgs) => unknown)
  /**
   * What must be the same when the key is seen again (its hash is compared; a different one is
   * refused with `IdempotencyPayloadMismatchError`): a path into the first argument or a function
   * of the arguments, or `false` to compare nothing. [the first argument]
   */
  payload?: string | ((...args: TArgs) => unknown) | false
  /** How long a COMPLETED or FAILED record protects the key, in seconds. [3600] */
  expiresAfterSeconds?: number
  /**
   * What a failure of `fn` does to the record: `'delete'` (the next call runs), `'fail'` (kept FAILED),
   * or a function deciding. [`'delete'`]
   */
  onFailure?: FailurePolicy
  /**
   * Put before every stored key, so two functions never share keys. [`AWS_LAMBDA_FUNCTION_NAME`, else
   * `'middy-idempotency'`]
   */
  namespace?: string
  /**
   * How long a call holds its key while it runs, in seconds, when no Lambda context is among the
   * arguments; with one, the lease ends at the invocation's deadline, or earlier when this is
   * shorter. [900, the longest a Lambda function runs]
   */
  leaseSeconds?: number
  /** Called once per call with what became of it. [none] */
  onOutcome?: (outcome: OutcomeReport) => void
  /** Where our log lines go, or `false` for none. [`console`] */
  logger?: IdempotencyLogger | false
  /** The least level logged. [`AWS_LAMBDA_LOG_LEVEL`, else `POWERTOOLS_LOG_LEVEL`, else `'info'`] */
  logLevel?: LogLevel
  /**
   * How far this host's clock may be behind others', in milliseconds: a lapsed lease is taken over only
   * this much later. [0]
   */
  clockSkewMs?: number
  /** The clock, epoch milliseconds (tests). [`Date.now`] */
  now?: () => number
}

const OPTION_NAMES = [
  'store', 'key', 'payload', 'expiresAfterSeconds', 'onFailure', 'namespace', 'leaseSeconds', 'onOutcome', 'logger',
  'logLevel', 'clockSkewMs', 'now'
] as const satisfies ReadonlyArray<keyof MakeIdempotentOptions>
// Fails to compile when an option is added to MakeIdempotentOptions but not to the list above.
const everyOptionListed: Exclude<keyof MakeIdempotentOptions, (typeof OPTION_NAMES)[number]> extends never
  ? true
  : never = true
void everyOptionListed

/**
 * The options checked, named `makeIdempotent` in every error: the middleware's checks for the
 * options both have, then ours. Answers them resolved as the middleware resolves its own
 * (`leaseSeconds` aside), defaults applied.
 */
export const checkOptions = (options: MakeIdempotentOptions<any>): ResolvedOptions => {
  if (options === null || typeof options !== 'object') {
    throw new IdempotencyConfigError('makeIdempotent: options are required ({ store })')
  }
  refuseUnknownOptions('makeIdempotent', options, OPTION_NAMES)
  const { leaseSeconds, ...shared } = options
  let resolved: ResolvedOptions
  try {
    resolved = resolveOptions(shared)
  } catch (error) {
    if (error instanceof IdempotencyConfigError) {
      throw new IdempotencyConfigError(error.message.replace(/^idempotency:/, 'makeIdempotent:'))
    }
    throw error
  }
  const isPositiveNumber = typeof leaseSeconds === 'number' && Number.isFinite(leaseSeconds) && leaseSeconds > 0
  if (leaseSeconds !== undefined && !isPositiveNumber) {
    throw new IdempotencyConfigError('makeIdempotent: leaseSeconds must be a positive number')
  }
  return resolved
}
