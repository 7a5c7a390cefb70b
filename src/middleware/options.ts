import { IdempotencyConfigError } from '../errors.js'
import { needsCommit } from '../unit/commit.js'
import { parsePath } from '../keys/selector.js'
import { defaultLogLevel, isLogLevel } from '../observe/log.js'
import { refuseUnknownOptions } from '../unknown-options.js'
import type { FailurePolicy, IdempotencyLogger, IdempotencyOptions, OutcomeReport, Selector } from '../types.js'

export type { IdempotencyOptions }

/** The options with every default applied. */
export interface ResolvedOptions extends Required<Omit<IdempotencyOptions, 'key' | 'payload' | 'logger' | 'onOutcome' | 'responseHook' | 'caller'>> {
  caller?: IdempotencyOptions['caller']
  onOutcome?: (outcome: OutcomeReport) => void
  responseHook?: IdempotencyOptions['responseHook']
  key?: Selector
  payload?: Selector | false
  logger: IdempotencyLogger | false
}

export const defaults = {
  expiresAfterSeconds: 3600,
  onFailure: 'delete' as FailurePolicy,
  mode: 'auto' as const,
  concurrency: 50,
  localCacheSize: 0,
  clockSkewMs: 0,
  timeoutMarginMs: 1000,
  effects: 'any' as const,
  now: Date.now
}

// Every option `idempotency()` reads, in the order the README lists them.
const OPTION_NAMES = ['store', 'key', 'payload', 'expiresAfterSeconds', 'onFailure', 'namespace', 'mode', 'concurrency', 'localCacheSize',
  'onOutcome', 'logger', 'logLevel', 'clockSkewMs', 'timeoutMarginMs', 'responseHook', 'caller', 'effects', 'now'] as const satisfies ReadonlyArray<keyof IdempotencyOptions>
// Fails to compile when an option is added to IdempotencyOptions but not to the list above.
const everyOptionListed: Exclude<keyof IdempotencyOptions, (typeof OPTION_NAMES)[number]> extends never ? true : never = true
void everyOptionListed

const isSelector = (value: unknown): boolean =>
  typeof value === 'function' || (typeof value === 'string' && value !== '')

const positiveInteger = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) > 0

/**
 * What is wrong with a namespace, or undefined. A stored key is namespace#hash, or
 * namespace#tenant#hash: a '#' of the namespace's own would make namespace 'orders#acme' read as
 * tenant acme of namespace 'orders'.
 */
export const namespaceProblem = (namespace: string): string | undefined => namespace.includes('#')
  ? `namespace must not contain '#' (got '${namespace}'): '#' separates the namespace from the tenant in a stored key, so another function's tenant could read as this namespace`
  : undefined

/** The `namespace` option's default: the function's name, so two functions never share keys. */
export const defaultNamespace = (): string => process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'middy-idempotency'

/** Applies defaults and checks every option, naming the one that is wrong. */
export const resolveOptions = (options: IdempotencyOptions): ResolvedOptions => {
  if (options === null || typeof options !== 'object') throw new IdempotencyConfigError('idempotency: options are required ({ store })')
  const { store } = options
  const methods = ['claim', 'complete', 'fail', 'release'] as const
  if (store === null || typeof store !== 'object' || methods.some((m) => typeof store[m] !== 'function')) {
    throw new IdempotencyConfigError('idempotency: store is required and must implement claim, complete, fail and release (a DynamoDBStore, a RedisStore or a MemoryStore)')
  }
  refuseUnknownOptions('idempotency', options, OPTION_NAMES)
  const problem =
    (options.key !== undefined && !isSelector(options.key) && 'key must be a non-empty path string or a function') ||
    (options.payload !== undefined && options.payload !== false && !isSelector(options.payload) && 'payload must be a path string, a function or false') ||
    (options.expiresAfterSeconds !== undefined && !positiveInteger(options.expiresAfterSeconds) && 'expiresAfterSeconds must be a positive integer') ||
    (options.onFailure !== undefined && !['delete', 'fail'].includes(options.onFailure as string) && typeof options.onFailure !== 'function' && "onFailure must be 'delete', 'fail' or a function") ||
    (options.namespace !== undefined && (typeof options.namespace !== 'string' || options.namespace === '') && 'namespace must be a non-empty string') ||
    (typeof options.namespace === 'string' && namespaceProblem(options.namespace)) ||
    (options.mode !== undefined && !['auto', 'sqs', 'kinesis', 'dynamodb', 'kafka', 'event'].includes(options.mode) && "mode must be 'auto', 'sqs', 'kinesis', 'dynamodb', 'kafka' or 'event'") ||
    (options.concurrency !== undefined && !positiveInteger(options.concurrency) && 'concurrency must be a positive integer') ||
    (options.localCacheSize !== undefined && !(Number.isSafeInteger(options.localCacheSize) && options.localCacheSize >= 0) && 'localCacheSize must be an integer of 0 or more') ||
    (options.logger !== undefined && options.logger !== false && (typeof options.logger?.warn !== 'function' || typeof options.logger?.error !== 'function') && 'logger must have warn and error functions, or be false') ||
    (options.logLevel !== undefined && !isLogLevel(options.logLevel) && "logLevel must be 'debug', 'info', 'warn', 'error' or 'silent'") ||
    (options.onOutcome !== undefined && typeof options.onOutcome !== 'function' && 'onOutcome must be a function') ||
    (options.clockSkewMs !== undefined && !(Number.isSafeInteger(options.clockSkewMs) && options.clockSkewMs >= 0) && 'clockSkewMs must be an integer of 0 or more') ||
    (options.timeoutMarginMs !== undefined && !(Number.isSafeInteger(options.timeoutMarginMs) && options.timeoutMarginMs >= 0) && 'timeoutMarginMs must be an integer of 0 or more') ||
    (options.responseHook !== undefined && typeof options.responseHook !== 'function' && 'responseHook must be a function') ||
    (options.caller !== undefined && typeof options.caller !== 'function' && 'caller must be a function (event, context) => string | undefined') ||
    (options.caller !== undefined && options.key !== undefined && 'caller scopes only the default HTTP key; with your own key option, put the caller in the key') ||
    (options.effects !== undefined && !['any', 'transact-only'].includes(options.effects) && "effects must be 'any' or 'transact-only'") ||
    (options.effects === 'transact-only' && typeof store.commit !== 'function' && needsCommit({ store }, "effects: 'transact-only'").message) ||
    (options.now !== undefined && typeof options.now !== 'function' && 'now must be a function returning epoch milliseconds')
  if (problem !== false) throw new IdempotencyConfigError(`idempotency: ${problem}`)

  for (const selector of [options.key, options.payload]) {
    if (typeof selector === 'string') {
      try {
        parsePath(selector)
      } catch (error) {
        throw new IdempotencyConfigError(`idempotency: ${selector === options.key ? 'key' : 'payload'} path ${(error as Error).message}`)
      }
    }
  }

  return {
    ...defaults,
    // The store knows how many requests it takes at once (a pipelining Redis client, far more
    // than the SDK's 50 sockets); the option, when set, still decides.
    ...(typeof store.limits?.concurrency === 'number' ? { concurrency: store.limits.concurrency } : {}),
    ...stripUndefined(options),
    namespace: options.namespace ?? defaultNamespace(),
    logger: options.logger ?? console,
    logLevel: options.logLevel ?? defaultLogLevel()
  } as ResolvedOptions
}

const stripUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
