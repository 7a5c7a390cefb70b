/**
 * The public types of middy-idempotency, in one place: the options of the middleware and of
 * `perRecord`, the retry policy, what `onOutcome` is told, and (re-exported from
 * `stores/store.ts`, beside the stores that implement it) the store contract.
 */
import type { Context } from 'aws-lambda'
import type { TransactItem } from './stores/dynamodb/transact-types.js'
import type { IdempotencyStore } from './stores/store.js'

export type {
  ClaimRecord, CommitOutcome, CommitResult, IdempotencyRecord, IdempotencyStore, RecordStatus, StoreCallOptions,
  StoreLimits
} from './stores/store.js'
// Types only (nothing of the DynamoDB store is loaded): `transact`'s entries with a DynamoDBStore.
export type { TransactEntry, TransactItem } from './stores/dynamodb/transact-types.js'

/**
 * Where a key or payload comes from: a path into the unit of work (`'body.orderId'`,
 * `'headers["idempotency-key"]'`; a string met on the way is parsed as JSON, so paths
 * read into SQS and API Gateway bodies) or a function of the unit and the Lambda context.
 *
 * @example
 * ```ts
 * const byPath: Selector = 'body.orderId'
 * const byFunction: Selector<SQSRecord> = (record) => JSON.parse(record.body).orderId
 * ```
 */
export type Selector<TUnit = any> = string | ((unit: TUnit, context: unknown) => unknown)

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
  : TEvent extends {
    eventSource: 'aws:kafka' | 'SelfManagedKafka'
    records: Record<string, ReadonlyArray<infer TRecord>>
  }
    ? TRecord
    : TEvent extends { Records: ReadonlyArray<infer TRecord> }
    // SQS, Kinesis and DynamoDB Streams records are units; other Records events (S3, SNS) are whole events.
      ? (TRecord extends
        | { messageId: string, receiptHandle: string }
        | { kinesis: object }
        | { eventName?: 'INSERT' | 'MODIFY' | 'REMOVE', dynamodb?: object }
          ? TRecord
          : TEvent)
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
  store: IdempotencyStore<any>
  /**
   * What identifies a unit of work: a path (`'body.orderId'`; JSON strings met on the way
   * are parsed) or a function `(unit, context) => value`. The selection is hashed; an
   * empty selection fails that unit with `IdempotencyKeyError`.
   * [SQS: `'messageId'`; Kinesis and DynamoDB Streams: `'eventID'`; Kafka: the record's cluster,
   * topic, partition and offset; HTTP: the `Idempotency-Key` header, scoped by API, stage,
   * method, path, query and caller; other events: the whole event]
   */
  key?: Selector<UnitOf<TEvent>>
  /**
   * What must be equal when a key is seen again (its hash is stored and compared), or
   * `false` to skip the check. [SQS: `'body'`; Kinesis: `'kinesis.data'`; DynamoDB Streams:
   * `'dynamodb'`; Kafka: `'value'`; HTTP: the body; other events: the whole event]
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
  /**
   * Prefix of every stored key, so that two functions sharing a table never collide. No `#`: it
   * separates the tenant. [`AWS_LAMBDA_FUNCTION_NAME`, else `'middy-idempotency'`]
   */
  namespace?: string
  /**
   * `'sqs'`, `'kinesis'`, `'dynamodb'` (DynamoDB Streams), `'kafka'` (Amazon MSK and self-managed):
   * per record of that source's batch; `'event'`: the whole event; `'auto'`: per record when the
   * event's records come from `aws:sqs`, `aws:kinesis` or `aws:dynamodb`, or the event is
   * `aws:kafka` or `SelfManagedKafka`, otherwise the whole event. ['auto']
   */
  mode?: 'auto' | 'sqs' | 'kinesis' | 'dynamodb' | 'kafka' | 'event'
  /**
   * Most store requests in flight at once for one batch. The default matches the SDK's
   * default pool of 50 sockets per client: more would only queue inside the SDK. A store may
   * state its own bound (`StoreLimits.maxStoreRequests`), used when this is not set. Formerly
   * `concurrency`: that name is now refused, since `perRecord`'s `concurrency` bounds records,
   * not requests. [50, or the store's own bound]
   */
  maxStoreRequests?: number
  /** COMPLETED records remembered in a warm container, answered without a request (0: off). [0] */
  localCacheSize?: number
  /**
   * Told once per unit of work what became of it (`completed`, `replayed`, `in-progress`,
   * `mismatch`...), with its key, messageId and error: for metrics and logs. A hook that
   * throws is logged and ignored. [none]
   */
  onOutcome?: (outcome: OutcomeReport) => void
  /**
   * Where the middleware logs one line per decision that matters (a unit failed, was held back,
   * kept its lease, replayed a failure, lost its lease; store faults), with its key, record id,
   * outcome and error name and message, never its payload. `console` gets one JSON line per
   * entry; a Powertools `Logger` (or any logger with `warn` and `error`, and optionally `info`
   * and `debug`) gets the entry as an object. `false` for silence. [`console`]
   */
  logger?: IdempotencyLogger | false
  /**
   * The least level logged: `debug` adds every completion and replay, `info` held-back and
   * in-progress units, `warn` failures, `error` store faults only. [Lambda's
   * `AWS_LAMBDA_LOG_LEVEL`, else `POWERTOOLS_LOG_LEVEL`, else `'info'`]
   */
  logLevel?: LogLevel
  /**
   * How far apart the clocks of two Lambda hosts may be, in milliseconds. A lease (the
   * owner's deadline, by the owner's clock) only counts as lapsed once it has been over for
   * this long by the claimer's clock, so a host whose clock runs ahead cannot take over work
   * that is still running. A `RedisStore` keeps each key twice this long more past its
   * record's expiry. Lambda hosts are kept in sync by the Amazon Time Sync Service, so
   * the default is none. [0]
   */
  clockSkewMs?: number
  /**
   * How close to the Lambda deadline (in milliseconds) a failure counts as a timeout, whatever
   * error or error status (whole event) the stack made of it. A timed-out unit keeps its lease (its work may still be
   * running) instead of going through `onFailure`; the lease ends at the deadline anyway. Every
   * store call is also given up this long before the deadline (a store that hangs), so that Lambda
   * still gets the answer, with the unfinished units failed. Set it to at least your Middy
   * `timeoutEarlyInMillis`. [1000]
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
   *   responseHook: (response, { key }) => ({
   *     ...(response as object),
   *     headers: { ...(response as { headers?: object }).headers, 'x-idempotency-key': key }
   *   })
   * })
   * ```
   */
  responseHook?: (response: unknown, info: { key: string, event: unknown }) => unknown
  /**
   * HTTP events with the default key: who the caller is, so that two callers sending the same
   * `Idempotency-Key` never share a stored response. Return `undefined` for an anonymous request;
   * the value is used as returned. Read by default, only from what AWS sets after authenticating
   * the request (never a header the client can send), each kind of caller prefixed with its kind:
   * a Lambda authorizer's whole answer (REST: `principalId` and context; HTTP API: its context);
   * a JWT or Cognito user pool token's `iss` and `sub`; a Cognito identity; an IAM user or role
   * session ARN; on an ALB event only, OIDC's `x-amzn-oidc-identity`. Use this option when your
   * authorizer's answer holds values that change per token, or to strip the session of a role
   * your workers share. Refused together with `key`: put the caller in your own key.
   * [the caller the authorizer names]
   *
   * @example
   * ```ts
   * idempotency({ store, caller: (event) => event.requestContext?.authorizer?.lambda?.userId })
   * ```
   */
  caller?: (event: any, context: Context) => string | undefined
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

/**
 * What the policy function is told about a failed unit of work.
 *
 * @example
 * ```ts
 * idempotency({ store, onFailure: (error, { attempt, key }) => attempt >= 3 ? 'fail' : 'delete' })
 * ```
 */
export interface FailureInfo {
  /** Delivery attempt: an SQS record's `ApproximateReceiveCount`; 1 for a whole event. */
  attempt: number
  /** The stored key. */
  key: string
}

/**
 * `'delete'`: a redelivery runs again. `'fail'`: keep a FAILED record; a redelivery is reported failed without running.
 *
 * @example
 * ```ts
 * const keep: FailureDecision = 'fail'
 * ```
 */
export type FailureDecision = 'delete' | 'fail'

/**
 * The retry policy: a fixed decision or one made per failure, by a function that may be async.
 *
 * @example
 * ```ts
 * const policy: FailurePolicy = (error) => error instanceof CardDeclinedError ? 'fail' : 'delete'
 * ```
 */
export type FailurePolicy =
  | FailureDecision
  | ((error: unknown, info: FailureInfo) => FailureDecision | Promise<FailureDecision>)

/**
 * A console-like logger: `console` itself, a Powertools `Logger`, or anything with `warn` and
 * `error` (and optionally `info` and `debug`) taking one entry.
 *
 * @example
 * ```ts
 * idempotency({ store, logger: new Logger({ serviceName: 'orders' }), logLevel: 'warn' })
 * ```
 */
export interface IdempotencyLogger {
  debug?: (...data: any[]) => void
  info?: (...data: any[]) => void
  warn: (...data: any[]) => void
  error: (...data: any[]) => void
}

/** The least level the middleware logs; `silent` logs nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

/**
 * What finally became of one unit of work (an SQS record, or a whole event).
 *
 * @example
 * ```ts
 * idempotency({ store, onOutcome: ({ kind }) => { if (kind === 'lease-lost') alarm() } })
 * ```
 */
export type OutcomeKind =
  /** It ran and its result is stored as COMPLETED. */
  | 'completed'
  /** It ran and failed (or its result could not be stored); `onFailure` was applied. */
  | 'failed'
  /**
   * It ran, but its lease had lapsed and another invocation had taken the record over: the
   * record is theirs and nothing of ours was written. Frequent ones mean work outlives its lease.
   */
  | 'lease-lost'
  /** COMPLETED before: the stored result was returned, nothing ran. */
  | 'replayed'
  /** The same key earlier in this batch: it shares that record's result. */
  | 'in-batch-copy'
  /** Another invocation holds a live lease on it. */
  | 'in-progress'
  /** A FAILED record was replayed (policy `'fail'`). */
  | 'failed-before'
  /** The key was used before with another payload. */
  | 'mismatch'
  /** No key could be taken from it. */
  | 'no-key'
  /**
   * Not attempted, and released: held back behind an earlier record of its ordering group, left
   * when the invocation timed out, or a record `perRecord` was not given.
   */
  | 'held-back'
  /** A store request for it failed after the SDK's retries. */
  | 'store-error'
  /** Middy's early timeout fired while it ran; its lease is kept. */
  | 'timed-out'

/**
 * Told to `onOutcome` once per unit of work, when its fate is known: for metrics
 * (replays, conflicts) and logs.
 *
 * @example
 * ```ts
 * idempotency({ store, onOutcome: ({ kind }) => metrics.increment(`idempotency.${kind}`) })
 * ```
 */
export interface OutcomeReport {
  kind: OutcomeKind
  /** The stored key, when one could be taken. */
  key?: string
  /** Batch modes: the record's `itemIdentifier` (an SQS messageId, a stream sequence number). */
  id?: string
  /** SQS batch mode: the record's messageId. */
  messageId?: string
  /** Why it did not complete, when it did not. */
  error?: unknown
  /**
   * Milliseconds: for a unit that ran, from the start of its work to its settlement in the
   * store; for one that did not, from the middleware's start to the decision (its claim or read).
   */
  durationMs?: number
  /** For a unit that failed: what the `onFailure` policy did with its record. */
  onFailure?: FailureDecision
}

/**
 * What `perRecord` gives the function it runs for each record, besides the record.
 *
 * @example
 * ```ts
 * perRecord<SQSEvent>(async (record, { signal, key, transact }) => {
 *   transact({ Put: { TableName: 'Payments', Item: { id: key }, ConditionExpression: 'attribute_not_exists(id)' } })
 *   return await charge(record, { idempotencyKey: key, signal })
 * })
 * ```
 */
export interface RecordTools<TWrite = TransactItem> {
  /** The Lambda context of the invocation. */
  context: Context
  /**
   * Aborts when Middy's early timeout fires for this invocation (never for another invocation the
   * same process serves at once). Pass it on to `fetch` and the SDK.
   */
  signal: AbortSignal
  /**
   * The record's stored idempotency key (its namespace and a hash of what identifies it): pass it
   * on to an API that deduplicates by key. With `idempotency` in the stack, the key its record is
   * stored under. Without the middleware (a unit test, a handler not yet protected), the key the
   * middleware would store the record under with its defaults (the source's default key, under
   * the function's name), computed when read.
   */
  key: string
  /**
   * Queues DynamoDB writes (`TransactWriteItems` entries with native values) that commit in
   * one transaction with the record's completion, only if the function then succeeds: for
   * effects that are DynamoDB writes, exactly once. At most 99 entries per record. Needs
   * `idempotency` with a `DynamoDBStore` in the stack; throws a clear error otherwise.
   */
  transact: (...items: TWrite[]) => void
}

/**
 * The events `perRecord` runs record by record: SQS, Kinesis and DynamoDB Streams (`Records`),
 * MSK and self-managed Kafka (`records`, by topic and partition).
 *
 * @example
 * ```ts
 * const event: BatchEvent = { Records: [] }
 * ```
 */
export type BatchEvent = { Records: ReadonlyArray<unknown> } | { records: Record<string, ReadonlyArray<unknown>> }

/**
 * The record type of a batch event: `SQSRecord` for `SQSEvent`, `KinesisStreamRecord`,
 * `DynamoDBRecord`, `MSKRecord`, `SelfManagedKafkaRecord`. `any` stays `any`.
 *
 * @example
 * ```ts
 * type R = RecordOf<SQSEvent> // SQSRecord
 * ```
 */
export type RecordOf<TEvent> = 0 extends (1 & TEvent)
  ? any
  : TEvent extends { records: Record<string, ReadonlyArray<infer TRecord>> }
    ? TRecord
    : TEvent extends { Records: ReadonlyArray<infer TRecord> } ? TRecord : never

/**
 * Options of {@link perRecord}.
 *
 * @example
 * ```ts
 * perRecord(chargeCard, { concurrency: 10 })
 * ```
 */
export interface PerRecordOptions {
  /**
   * Most records whose work runs at once. A record gives its place to the next once its work has
   * ended and the write of its outcome has its turn at the store (those writes share the store's
   * own bound), or, when that write commits its `transact` writes, once they are committed; the
   * next record of its ordering group still waits for that write.
   * [the middleware's `maxStoreRequests` option when you set it, else 50 (never the store's own bound)]
   */
  concurrency?: number
}

/**
 * The Middy handler `perRecord` returns: one settled entry per record it is given, in order.
 * `TEvent`, when given, is the event it takes (`perRecord<SQSEvent>(...)`).
 *
 * @example
 * ```ts
 * const handler: PerRecordHandler<SQSRecord, Receipt> = perRecord(chargeCard)
 * middy<SQSEvent>().use(idempotency({ store })).handler(handler)
 * ```
 */
export type PerRecordHandler<
  TRecord,
  TResult,
  TEvent = { Records: TRecord[] } | { records: Record<string, TRecord[]> }
> =
  (event: TEvent, context: Context, options?: { signal?: AbortSignal }) => Promise<Array<PromiseSettledResult<TResult>>>

/**
 * Whole-event mode: what the middleware puts on `context.idempotency` for the handler.
 *
 * @example
 * ```ts
 * .handler(async (event, context) => {
 *   const { transact } = (context as { idempotency: IdempotencyContext }).idempotency
 *   transact({ Put: { TableName: 'Orders', Item: order, ConditionExpression: 'attribute_not_exists(orderId)' } })
 *   return { statusCode: 201, body: JSON.stringify(order) }
 * })
 * ```
 */
export interface IdempotencyContext<TWrite = TransactItem> {
  /** The event's stored idempotency key. */
  key: string
  /** Queues DynamoDB writes that commit in one transaction with the completion (see `RecordTools.transact`). */
  transact: (...items: TWrite[]) => void
}

/**
 * The Lambda context as a handler gets it with `idempotency` in the stack: Middy types the
 * handler's `context` with it. `idempotency` is there while a whole event runs claimed; it is
 * absent for a batch (`perRecord` gives each record its `key` and `transact`) and for a request
 * that runs unprotected (a GET without an `Idempotency-Key`).
 *
 * @example
 * ```ts
 * .handler(async (event, context) => {
 *   context.idempotency?.transact({ Put: { TableName: 'Orders', Item: order } })
 * })
 * ```
 */
export type IdempotencyHandlerContext = Context & { idempotency?: IdempotencyContext }

/**
 * The part of Middy's request object the middleware's hooks use (same shape in Middy 5, 6 and 7).
 * `unknown`, not `any`: Middy's `.use()` intersects each middleware's event type with the
 * handler's, and `any` would erase the user's `SQSEvent`.
 */
export interface MiddyRequest {
  event: unknown
  context: unknown
  response: unknown
  error?: unknown
  earlyResponse?: unknown
}

export type { ProblemDetails } from './errors.js'

/**
 * The request Middy gives the middleware's hooks, as they declare it: its `context` type is how
 * Middy learns that the handler's context has `idempotency`.
 *
 * @example
 * ```ts
 * const before = async (request: IdempotencyRequest) => request.context.idempotency?.key
 * ```
 */
export type IdempotencyRequest = MiddyRequest & { context: IdempotencyHandlerContext }
