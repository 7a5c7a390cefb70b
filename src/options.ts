import { defaults } from './defaults.js'
import { IdempotencyConfigError } from './errors.js'
import { needsCommit } from './lifecycle/completion.js'
import type { LifecycleConfig } from './lifecycle/config.js'
import { LocalCache } from './lifecycle/claim.js'
import { compileSelector, parsePath, type EncodedParts } from './keys/selector.js'
import { defaultNamespace, namespaceProblem, type Selection } from './keys/prepare.js'
import { createLog, defaultLogLevel, type Log } from './observe/log.js'
import { definedOptions, refuseUnknownOptions } from './unknown-options.js'
import type { IdempotencyLogger, IdempotencyOptions, OutcomeReport, Selector } from './types.js'

export type { IdempotencyOptions }

/** The options with every default applied. */
export interface ResolvedOptions
  extends Required<Omit<IdempotencyOptions, 'key' | 'payload' | 'logger' | 'onOutcome' | 'responseHook' | 'caller'>> {
  caller?: IdempotencyOptions['caller']
  onOutcome?: (outcome: OutcomeReport) => void
  responseHook?: IdempotencyOptions['responseHook']
  key?: Selector
  payload?: Selector | false
  logger: IdempotencyLogger | false
}

type OptionCheck = (value: any, options: IdempotencyOptions) => boolean | string | undefined
const nonNegative = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0
const positive = (value: unknown): boolean => nonNegative(value) && value !== 0
const isFunction = (value: unknown): boolean => typeof value === 'function'
/** A check that `value` is one of `values`, and its words: `be 'a', 'b' or 'c'`. */
const oneOf = (...values: string[]): [check: OptionCheck, must: string] => [
  (value) => values.includes(value),
  `be ${values.slice(0, -1).map((v) => `'${v}'`).join(', ')} or '${values.at(-1) as string}'`
]
// Checks several options share, each with its words written once.
const NON_NEGATIVE: [OptionCheck, string] = [nonNegative, 'be an integer of 0 or more']
const POSITIVE: [OptionCheck, string] = [positive, 'be a positive integer']
const FUNCTION: [OptionCheck, string] = [isFunction, 'be a function']

/** A path option as `parsePath` takes it, or why not (`key path "a..b" is malformed...`). */
const pathOption = (option: string, selector: unknown): true | string | boolean => {
  if (typeof selector !== 'string') return isFunction(selector)
  if (selector === '') return false
  try {
    parsePath(selector)
    return true
  } catch (error) {
    return `${option} path ${(error as Error).message}`
  }
}

/**
 * Every option `idempotency()` reads, in the order the README lists them (which is also the order
 * they are checked in and named in an unknown option's error), with its check: true when the
 * value is good, false for the words after `<option> must `, or a sentence of its own.
 */
const OPTIONS: Record<keyof IdempotencyOptions, [check: OptionCheck, must: string] | []> = {
  store: [],
  key: [(key) => pathOption('key', key), 'be a non-empty path string or a function'],
  payload: [(payload) => payload === false || pathOption('payload', payload), 'be a path string, a function or false'],
  expiresAfterSeconds: POSITIVE,
  onFailure: [(policy) => isFunction(policy) || policy === 'delete' || policy === 'fail',
    "be 'delete', 'fail' or a function"],
  namespace: [(namespace) => typeof namespace === 'string' && namespace !== '' && (namespaceProblem(namespace) ?? true),
    'be a non-empty string'],
  mode: oneOf('auto', 'sqs', 'kinesis', 'dynamodb', 'kafka', 'event'),
  maxStoreRequests: POSITIVE,
  localCacheSize: NON_NEGATIVE,
  onOutcome: FUNCTION,
  logger: [(logger) => logger === false || (isFunction(logger?.warn) && isFunction(logger?.error)),
    'have warn and error functions, or be false'],
  logLevel: oneOf('debug', 'info', 'warn', 'error', 'silent'),
  clockSkewMs: NON_NEGATIVE,
  timeoutMarginMs: NON_NEGATIVE,
  responseHook: FUNCTION,
  caller: [(caller, { key }) => isFunction(caller) && (key === undefined ||
    'caller scopes only the default HTTP key; with your own key option, put the caller in the key'),
  'be a function (event, context) => string | undefined'],
  effects: [(effects, { store }) => effects === 'any' || (effects === 'transact-only' && (isFunction(store.commit) ||
    needsCommit({ store }, "effects: 'transact-only'").message)),
  "be 'any' or 'transact-only'"],
  now: [isFunction, 'be a function returning epoch milliseconds']
}

/** Applies defaults and checks every option, naming the one that is wrong. */
export const resolveOptions = (options: IdempotencyOptions): ResolvedOptions => {
  if (options === null || typeof options !== 'object') {
    throw new IdempotencyConfigError('idempotency: options are required ({ store })')
  }
  const { store } = options
  const isStore = store !== null && typeof store === 'object' &&
    ['claim', 'complete', 'fail', 'release'].every((m) => isFunction(store[m as 'claim']))
  if (!isStore) {
    throw new IdempotencyConfigError('idempotency: store is required and must implement claim, complete, fail and ' +
      'release (a DynamoDBStore, a RedisStore or a MemoryStore)')
  }
  refuseUnknownOptions('idempotency', options, Object.keys(OPTIONS))
  // A store written for 0.1 states its bound as `concurrency`: ignored, the default would let more
  // requests out than its client takes. Other limits are left be: a newer store may state more.
  const limits = store.limits as { concurrency?: number, maxStoreRequests?: number } | undefined
  if (limits?.concurrency !== undefined && limits.maxStoreRequests === undefined) {
    throw new IdempotencyConfigError("idempotency: the store's limits.concurrency is now maxStoreRequests")
  }
  for (const [name, [check, must]] of Object.entries(OPTIONS)) {
    const value = options[name as keyof IdempotencyOptions]
    const verdict = value === undefined || (check?.(value, options) ?? true)
    if (verdict !== true) {
      const problem = typeof verdict === 'string' ? verdict : `${name} must ${must}`
      throw new IdempotencyConfigError(`idempotency: ${problem}`)
    }
  }

  return {
    ...defaults,
    // The store knows how many requests it takes at once (a pipelining Redis client, far more
    // than the SDK's 50 sockets); the option, when set, still decides. A bound that is no positive
    // integer is a store's slip, not taken: with it, no record would ever be claimed.
    ...(positive(store.limits?.maxStoreRequests) ? { maxStoreRequests: store.limits?.maxStoreRequests } : {}),
    ...definedOptions(options),
    namespace: options.namespace ?? defaultNamespace(),
    logger: options.logger ?? console,
    logLevel: options.logLevel ?? defaultLogLevel()
  } as ResolvedOptions
}

/**
 * The lifecycle every unit goes through (claim, settle, report), from the resolved options: the
 * one builder behind the middleware and `makeIdempotent`, so that both read an option alike.
 */
export const lifecycleConfig = (resolved: ResolvedOptions): LifecycleConfig => ({
  store: resolved.store,
  expiresAfterSeconds: resolved.expiresAfterSeconds,
  onFailure: resolved.onFailure,
  log: createLog(resolved.logger, resolved.logLevel),
  now: resolved.now,
  clockSkewMs: resolved.clockSkewMs,
  ...(resolved.effects === 'transact-only' ? { transactOnly: true } : {}),
  ...(resolved.onOutcome === undefined ? {} : { onOutcome: resolved.onOutcome }),
  ...(resolved.localCacheSize > 0 ? { cache: new LocalCache(resolved.localCacheSize) } : {})
})

/** The key and payload a kind of event selects when the options name none. */
type DefaultSelectors = { key: Selector, payload: Selector }

/** What the hooks of one middleware share: its options, its lifecycle, and how it selects a key. */
export interface Setup {
  resolved: ResolvedOptions
  /** The `maxStoreRequests` option as given (records run at once default to it, not to the store's bound). */
  maxStoreRequests?: number
  config: LifecycleConfig
  /**
   * The key and payload selection, from the options or else from `defaults`; `defaultKeyName` names the
   * default key in errors.
   */
  selection: (defaults: DefaultSelectors, defaultKeyName: string, encoded?: EncodedParts) => Selection
}

/** Checks the options and builds the lifecycle every unit of this middleware goes through. */
export const setUp = (options: IdempotencyOptions<any>): Setup => {
  const resolved = resolveOptions(options)
  const config = lifecycleConfig(resolved)
  const selection = (defaults: DefaultSelectors, defaultKeyName: string, encoded: EncodedParts = []): Selection => {
    const key = compileSelector(resolved.key ?? defaults.key, 'key', encoded)
    const payload = resolved.payload === false
      ? undefined
      : compileSelector(resolved.payload ?? defaults.payload, 'payload', encoded)
    const keyName = typeof resolved.key === 'string'
      ? `key path "${resolved.key}"`
      : resolved.key === undefined ? defaultKeyName : 'the key function'
    return {
      namespace: resolved.namespace,
      key,
      keyName,
      defaultKey: resolved.key === undefined,
      ...(payload === undefined ? {} : { payload })
    }
  }
  const { maxStoreRequests } = options
  return { resolved, ...(maxStoreRequests === undefined ? {} : { maxStoreRequests }), config, selection }
}

/** The switch that turns idempotency off for local runs (as Powertools' `POWERTOOLS_IDEMPOTENCY_DISABLED` does). */
export const DISABLED_VARIABLE = 'MIDDY_IDEMPOTENCY_DISABLED'

const OFF = ['true', '1']
const ON = ['false', '0', '']

/**
 * Whether the code runs in a real AWS Lambda execution environment, whatever was copied into its
 * configuration. `AWS_LAMBDA_INITIALIZATION_TYPE` is reserved: Lambda sets it in every execution
 * environment and a function's configuration cannot set it; SAM's local emulator does not set it
 * (it sets `AWS_SAM_LOCAL=true` and the function's name). `AWS_SAM_LOCAL` is not reserved, so it
 * alone proves nothing: it is only believed where Lambda's own variable is absent.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
const inLambda = (env: Record<string, string | undefined>): boolean =>
  env.AWS_LAMBDA_INITIALIZATION_TYPE !== undefined ||
  (env.AWS_LAMBDA_FUNCTION_NAME !== undefined && env.AWS_SAM_LOCAL !== 'true')

/**
 * Whether idempotency is off for this invocation: `MIDDY_IDEMPOTENCY_DISABLED` is `true` or `1`
 * AND the code does not run in AWS Lambda. In Lambda itself the switch is refused: a variable
 * copied into a deployed function must never let a payment run twice, so idempotency stays on
 * and the refusal is logged. A value that is neither on nor off (`yes`) leaves idempotency on,
 * with a warning naming it. Read at every call, so each invocation says it runs unprotected.
 */
export const isDisabled = (log: Log, env: Record<string, string | undefined> = process.env): boolean => {
  const value = env[DISABLED_VARIABLE]
  if (value === undefined) return false
  const normalised = value.trim().toLowerCase()
  if (ON.includes(normalised)) return false
  if (!OFF.includes(normalised)) {
    log.warn({
      message: `idempotency: ${DISABLED_VARIABLE}=${JSON.stringify(value)} is not recognised ` +
        '(true or 1 turns idempotency off; false or 0 leaves it on): idempotency stays on'
    })
    return false
  }
  if (inLambda(env)) {
    log.error({
      message: `idempotency: ${DISABLED_VARIABLE} is ignored in AWS Lambda ` +
        '(only local runs may turn idempotency off); idempotency stays on'
    })
    return false
  }
  log.warn({
    message: `idempotency: DISABLED by ${DISABLED_VARIABLE}: this invocation runs with no idempotency (local runs only)`
  })
  return true
}
