import { IdempotencyConfigError } from './errors.js'
import type { FailurePolicy, IdempotencyLogger } from './lifecycle/config.js'
import type { UnitOutcome } from './lifecycle/report.js'
import { parsePath, type Selector } from './lifecycle/key.js'
import type { IdempotencyStore } from './stores/store.js'

/**
 * What a `key` or `payload` function receives for an event of type `TEvent`: one record of an
 * SQS batch (per-record mode), otherwise the event itself. `any` stays `any`, so options written
 * without a type argument compile as they always did. (With `mode: 'event'` on an SQS event the
 * functions get the whole event: give the type argument `unknown`, or no type argument, then.)
 *
 * @example
 * ```ts
 * type A = UnitOf<SQSEvent>               // SQSRecord
 * type B = UnitOf<APIGatewayProxyEventV2> // APIGatewayProxyEventV2
 * ```
 */
export type UnitOf<TEvent> = 0 extends (1 & TEvent)
  ? any
  : TEvent extends { Records: ReadonlyArray<infer TRecord> }
    ? (TRecord extends { messageId: string, receiptHandle: string } ? TRecord : TEvent)
    : TEvent

/**
 * Options of {@link idempotency}. Only `store` is required. `TEvent`, the event type of the
 * handler, types what `key` and `payload` functions receive (see {@link UnitOf}).
 *
 * @example
 * ```ts
 * idempotency({
 *   store: new DynamoDBStore({ tableName: 'IdempotencyStore' }),
 *   key: 'body.orderId',            // producer duplicates share an order id, not a messageId
 *   payload: 'body',                // the same order id with another body is refused (422)
 *   expiresAfterSeconds: 24 * 3600,
 *   onFailure: (error, { attempt }) => attempt >= 3 ? 'fail' : 'delete'
 * })
 *
 * // Typed: `record` is an SQSRecord.
 * idempotency<SQSEvent>({ store, key: (record) => JSON.parse(record.body).orderId })
 * ```
 */
export interface IdempotencyOptions<TEvent = any> {
  /** Where records are kept: `DynamoDBStore` in production, `MemoryStore` in tests. Required. */
  store: IdempotencyStore
  /**
   * What identifies a unit of work: a path (`'body.orderId'`; JSON strings met on the way
   * are parsed) or a function `(unit, context) => value`. The selection is hashed; an
   * empty selection fails that unit with `IdempotencyKeyError`.
   * [SQS record: `'messageId'`. Whole event: the whole event]
   */
  key?: Selector<UnitOf<TEvent>>
  /**
   * What must be equal when a key is seen again (its hash is stored and compared), or
   * `false` to skip the check. [SQS record: `'body'`. Whole event: the whole event]
   */
  payload?: Selector<UnitOf<TEvent>> | false
  /** How long a COMPLETED or FAILED record protects its key, in seconds. [3600] */
  expiresAfterSeconds?: number
  /**
   * The retry policy when processing fails: `'delete'` (a redelivery runs again),
   * `'fail'` (a FAILED record is kept; a redelivery is reported failed without running),
   * or a function `(error, { attempt, key })` deciding per failure; for SQS, `attempt`
   * is the record's `ApproximateReceiveCount`. ['delete']
   */
  onFailure?: FailurePolicy
  /** Prefix of every stored key, so that two functions sharing a table never collide. [`AWS_LAMBDA_FUNCTION_NAME`, else `'middy-idempotency'`] */
  namespace?: string
  /**
   * `'sqs'`, `'kinesis'`, `'dynamodb'` (DynamoDB Streams): per record of that source's batch;
   * `'event'`: the whole event; `'auto'`: per record when the event's records come from
   * `aws:sqs`, `aws:kinesis` or `aws:dynamodb`, otherwise the whole event. ['auto']
   */
  mode?: 'auto' | 'sqs' | 'kinesis' | 'dynamodb' | 'event'
  /**
   * Most store requests in flight at once for one batch. The default matches the SDK's
   * default pool of 50 sockets per client: more would only queue inside the SDK. [50]
   */
  concurrency?: number
  /** COMPLETED records remembered in a warm container, answered without a request (0: off). [0] */
  localCacheSize?: number
  /**
   * Told once per unit of work what became of it (`completed`, `replayed`, `in-progress`,
   * `mismatch`...), with its key, messageId and error: for metrics and logs. A hook that
   * throws is logged and ignored. [none]
   */
  onOutcome?: (outcome: UnitOutcome) => void
  /** Where lost leases and store faults are reported; `false` for silence. [`console`] */
  logger?: IdempotencyLogger | false
  /**
   * How far apart the clocks of two Lambda hosts may be, in milliseconds. A lease (the
   * owner's deadline, by the owner's clock) only counts as lapsed once it has been over for
   * this long by the claimer's clock, so a host whose clock runs ahead cannot take over work
   * that is still running. Lambda hosts are kept in sync by the Amazon Time Sync Service, so
   * the default is none. [0]
   */
  clockSkewMs?: number
  /**
   * Whole-event mode: how close to the Lambda deadline (in milliseconds) a failure counts as a
   * timeout, whatever error or 5xx the stack made of it. A timed-out invocation keeps its lease
   * (its handler may still be running) instead of going through `onFailure`; the lease ends at
   * the deadline anyway. Set it to at least your Middy `timeoutEarlyInMillis`. [1000]
   */
  timeoutMarginMs?: number
  /**
   * Whole-event mode: called with every replayed response (after `Idempotent-Replayed: true`
   * was added to an HTTP one) and the request's stored key and event; what it returns (or
   * resolves to) is what the duplicate gets. It runs on replays only, never on a first run. A
   * hook that throws fails that request. [none]
   *
   * @example
   * ```ts
   * idempotency({
   *   store,
   *   responseHook: (response, { key }) => ({ ...(response as object), headers: { ...(response as { headers?: object }).headers, 'x-idempotency-key': key } })
   * })
   * ```
   */
  responseHook?: (response: unknown, info: { key: string, event: unknown }) => unknown
  /**
   * `'transact-only'`: a promise you make that every effect of your `perRecord` function is a
   * `transact` write. Records are then not claimed before they run: a new record costs one
   * request, its `TransactWriteItems` of your writes and its COMPLETED record (put on the
   * claim's condition). Concurrent duplicates may both run; exactly one commits, the other
   * replays its result. **Unsafe with any other effect** (an HTTP call, an email, a write
   * outside `transact`): that effect would happen once per concurrent duplicate. Batch mode
   * with `perRecord` and a `DynamoDBStore` only. ['any']
   */
  effects?: 'any' | 'transact-only'
  /** The clock, epoch milliseconds: for tests that move time. [`Date.now`] */
  now?: () => number
}

/** The options with every default applied. */
export interface ResolvedOptions extends Required<Omit<IdempotencyOptions, 'key' | 'payload' | 'logger' | 'onOutcome' | 'responseHook'>> {
  onOutcome?: (outcome: UnitOutcome) => void
  responseHook?: IdempotencyOptions['responseHook']
  key?: Selector
  payload?: Selector | false
  logger: IdempotencyLogger
}

const silent: IdempotencyLogger = { warn: () => {}, error: () => {} }

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

const isSelector = (value: unknown): boolean =>
  typeof value === 'function' || (typeof value === 'string' && value !== '')

const positiveInteger = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) > 0

/** Applies defaults and checks every option, naming the one that is wrong. */
export const resolveOptions = (options: IdempotencyOptions): ResolvedOptions => {
  if (options === null || typeof options !== 'object') throw new IdempotencyConfigError('idempotency: options are required ({ store })')
  const { store } = options
  const methods = ['claim', 'complete', 'fail', 'release'] as const
  if (store === null || typeof store !== 'object' || methods.some((m) => typeof store[m] !== 'function')) {
    throw new IdempotencyConfigError('idempotency: store is required and must implement claim, complete, fail and release (a DynamoDBStore or a MemoryStore)')
  }
  const problem =
    (options.key !== undefined && !isSelector(options.key) && 'key must be a non-empty path string or a function') ||
    (options.payload !== undefined && options.payload !== false && !isSelector(options.payload) && 'payload must be a path string, a function or false') ||
    (options.expiresAfterSeconds !== undefined && !positiveInteger(options.expiresAfterSeconds) && 'expiresAfterSeconds must be a positive integer') ||
    (options.onFailure !== undefined && !['delete', 'fail'].includes(options.onFailure as string) && typeof options.onFailure !== 'function' && "onFailure must be 'delete', 'fail' or a function") ||
    (options.namespace !== undefined && (typeof options.namespace !== 'string' || options.namespace === '') && 'namespace must be a non-empty string') ||
    (options.mode !== undefined && !['auto', 'sqs', 'kinesis', 'dynamodb', 'event'].includes(options.mode) && "mode must be 'auto', 'sqs', 'kinesis', 'dynamodb' or 'event'") ||
    (options.concurrency !== undefined && !positiveInteger(options.concurrency) && 'concurrency must be a positive integer') ||
    (options.localCacheSize !== undefined && !(Number.isSafeInteger(options.localCacheSize) && options.localCacheSize >= 0) && 'localCacheSize must be an integer of 0 or more') ||
    (options.logger !== undefined && options.logger !== false && (typeof options.logger?.warn !== 'function' || typeof options.logger?.error !== 'function') && 'logger must have warn and error functions, or be false') ||
    (options.onOutcome !== undefined && typeof options.onOutcome !== 'function' && 'onOutcome must be a function') ||
    (options.clockSkewMs !== undefined && !(Number.isSafeInteger(options.clockSkewMs) && options.clockSkewMs >= 0) && 'clockSkewMs must be an integer of 0 or more') ||
    (options.timeoutMarginMs !== undefined && !(Number.isSafeInteger(options.timeoutMarginMs) && options.timeoutMarginMs >= 0) && 'timeoutMarginMs must be an integer of 0 or more') ||
    (options.responseHook !== undefined && typeof options.responseHook !== 'function' && 'responseHook must be a function') ||
    (options.effects !== undefined && !['any', 'transact-only'].includes(options.effects) && "effects must be 'any' or 'transact-only'") ||
    (options.effects === 'transact-only' && typeof store.commit !== 'function' && "effects: 'transact-only' needs a store that commits transactions (DynamoDBStore)") ||
    (options.now !== undefined && typeof options.now !== 'function' && 'now must be a function returning epoch milliseconds')
  if (problem !== false) throw new IdempotencyConfigError(`idempotency: ${problem}`)

  for (const selector of [options.key, options.payload]) {
    if (typeof selector === 'string') {
      try {
        parsePath(selector)
      } catch (error) {
        throw new IdempotencyConfigError(`idempotency: ${selector === options.key ? 'key' : 'payload'} path is ${(error as Error).message}`)
      }
    }
  }

  return {
    ...defaults,
    ...stripUndefined(options),
    namespace: options.namespace ?? process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'middy-idempotency',
    logger: options.logger === false ? silent : options.logger ?? console
  } as ResolvedOptions
}

const stripUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
