import { timeText } from './error-text.js'

/*
 * Every error middy-idempotency raises, in one module: each is an `instanceof IdempotencyError`
 * with a stable `name`. The refusals of an HTTP request carry `statusCode` and `expose` for
 * @middy/http-error-handler, and `problem`, the words a client gets: their `message` is for the
 * developer reading the log (docs/architecture.md: whole events and HTTP).
 */

/** The problem details of a refusal: `about:blank`, so the title is the status phrase (RFC 9457 §4.2.1). */
const problem = (status: 400 | 409 | 422, detail: string): ProblemDetails =>
  ({
    type: 'about:blank',
    title: { 400: 'Bad Request', 409: 'Conflict', 422: 'Unprocessable Content' }[status],
    status,
    detail
  })

/**
 * What an HTTP client is told when the middleware refuses its request (400 without a usable
 * idempotency key, 409 while the same key is in progress, 422 when the key was used with another
 * body): RFC 9457 problem details, sent as `application/problem+json`
 * (https://www.rfc-editor.org/rfc/rfc9457). Words for the client only: never the stored key, a
 * hash, a lease time or an option name. The refused error's `message` says more, in the log.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyInProgressError) console.log(error.problem.status, error.problem.detail)
 * ```
 */
export interface ProblemDetails {
  /** A URI naming the kind of problem. `about:blank`: the status code says it all. @default 'about:blank' */
  type: string
  /** The HTTP status phrase (`Bad Request`, `Conflict`, `Unprocessable Content`). */
  title: string
  /** The HTTP status code of the response. */
  status: number
  /** What the client should do, in a sentence. */
  detail: string
}

/**
 * Errors raised by middy-idempotency. Every one is an `instanceof IdempotencyError`,
 * has a stable `name` you can switch on, and says which key it is about.
 *
 * @example
 * ```ts
 * import { IdempotencyError, IdempotencyInProgressError } from 'middy-idempotency'
 *
 * try { await handler(event, context) } catch (error) {
 *   if (error instanceof IdempotencyInProgressError) console.log('retry later', error.key)
 *   else if (error instanceof IdempotencyError) console.log(error.name, error.message)
 * }
 * ```
 */
export class IdempotencyError extends Error {
  /** The stored idempotency key this error is about, when there is one. */
  readonly key?: string

  constructor (message: string, options: { key?: string, cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'IdempotencyError'
    // Declared fields are own properties already (ES2022 class fields): an undefined one stays undefined.
    this.key = options.key
  }
}

/**
 * Another invocation holds a live lease on this key: the work may be running right
 * now. Retry later (SQS does, after the visibility timeout). `statusCode` 409; in HTTP mode
 * the client is answered `409 Conflict` with `problem`.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyInProgressError) return { statusCode: error.statusCode }
 * ```
 */
export class IdempotencyInProgressError extends IdempotencyError {
  readonly statusCode = 409
  readonly expose = true
  /** What an HTTP client is told: another request with its key is still being processed. */
  readonly problem = problem(409,
    'Another request with the same idempotency key is still being processed. Retry this request later.')

  /** When the other owner's lease lapses (epoch milliseconds). */
  readonly leaseExpiresAt?: number

  constructor (key: string, leaseExpiresAt?: number) {
    // The stored key, which names the function, stays in `.key` (the log shows it as a field of its own).
    // A lease end no date holds (another version's record) is said as its number.
    const until = leaseExpiresAt === undefined
      ? ''
      : ` (its lease runs until ${timeText(leaseExpiresAt)})`
    super(`this request is being processed by another invocation${until}`, { key })
    this.name = 'IdempotencyInProgressError'
    this.leaseExpiresAt = leaseExpiresAt
  }
}

/**
 * The key was seen before with a different payload: the same idempotency key was
 * reused for different work. Nothing is run and the stored record is left alone.
 * `statusCode` 422; in HTTP mode the client is answered `422 Unprocessable Content` with `problem`.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyPayloadMismatchError) console.error('key reused', error.key)
 * ```
 */
export class IdempotencyPayloadMismatchError extends IdempotencyError {
  readonly statusCode = 422
  readonly expose = true
  /** What an HTTP client is told: its key was used before for another request. */
  readonly problem = problem(422,
    'This idempotency key was already used for a request with a different body. Send a new key for a new request.')

  constructor (key: string) {
    super('this idempotency key was already used with a different payload', { key })
    this.name = 'IdempotencyPayloadMismatchError'
  }
}

/**
 * What is kept of a failure in a FAILED record: never a stack.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyFailedError) console.log(error.storedError.name, error.storedError.message)
 * ```
 */
export interface StoredError {
  name: string
  /** At most about 1 KB: a longer message is cut, and says so. */
  message: string
  /** The error's own `code` (a string), when it has one: `ECONNRESET`, `card_declined`. */
  code?: string
}

/**
 * A FAILED outcome is stored for this key (policy `onFailure: 'fail'`): the business
 * logic is not run again until the record expires; the stored error is replayed.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyFailedError) console.log(error.storedError.message)
 * ```
 */
export class IdempotencyFailedError extends IdempotencyError {
  /** The name and message stored when the work failed. */
  readonly storedError: StoredError

  constructor (key: string, storedError: StoredError) {
    super(`key ${key} failed before and is not retried: ${storedError.name}: ${storedError.message}`, { key })
    this.name = 'IdempotencyFailedError'
    this.storedError = storedError
  }
}

/**
 * No idempotency key could be taken from the event or record: the `key` path found
 * nothing, the key function threw or returned nothing, or a path read into a body
 * that is not JSON. The record fails on its own; it is never run without protection.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyKeyError) console.error(error.message, error.cause)
 * ```
 */
export class IdempotencyKeyError extends IdempotencyError {
  /**
   * 400 when the request is to blame (no `Idempotency-Key`, a body that is not JSON, a missing
   * field): in HTTP mode the client is answered with `problem`. 500 when the server is (a key
   * function that throws or returns something that cannot be hashed): nothing is said to the client.
   */
  readonly statusCode: 400 | 500
  readonly expose: boolean
  /** What an HTTP client is told, for a 400 only. */
  readonly problem?: ProblemDetails

  /** `detail`: what the client is told for a 400 (a generic sentence when not given). */
  constructor (message: string, cause?: unknown, options: { clientError?: boolean, detail?: string } = {}) {
    super(message, { cause })
    this.name = 'IdempotencyKeyError'
    this.expose = options.clientError ?? true
    this.statusCode = this.expose ? 400 : 500
    if (this.expose) {
      this.problem = problem(400,
        options.detail ?? 'The request does not carry the idempotency key it is identified by.')
    }
  }
}

/**
 * The handler's result cannot be stored: JSON has no text for it (a BigInt, a cycle, a
 * `toJSON` that throws, a function as the whole result) or it is too big for a DynamoDB
 * item (400 KB). Anything else is stored as what `JSON.stringify` makes of it.
 * The work did happen, so the record is kept as FAILED (never re-run) and reported
 * failed with this error.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyResponseError) console.error(error.key, error.message)
 * ```
 */
export class IdempotencyResponseError extends IdempotencyError {
  constructor (key: string, problem: string, cause?: unknown) {
    // The stored key stays in `.key`: in the message it would push the problem out of a listing's column.
    super(`the response cannot be stored: ${problem}`, { key, cause })
    this.name = 'IdempotencyResponseError'
  }
}

/**
 * Which store request failed.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyStoreError && error.operation === 'claim') console.log('not run')
 * ```
 */
export type StoreOperation = 'claim' | 'complete' | 'fail' | 'release' | 'read' | 'commit'

/**
 * A store request failed after the SDK's own retries (throttling, network, access,
 * a missing table...). The AWS error is kept as `cause`. The record concerned fails;
 * it never silently succeeds.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyStoreError) console.error(error.operation, error.cause)
 * ```
 */
export class IdempotencyStoreError extends IdempotencyError {
  /** The store request that failed. */
  readonly operation: StoreOperation

  constructor (operation: StoreOperation, message: string, options: { key?: string, cause?: unknown } = {}) {
    super(message, options)
    this.name = 'IdempotencyStoreError'
    this.operation = operation
  }
}

/**
 * The middleware or a store was configured wrongly, or the event is not the kind
 * the configured mode expects. Raised at construction for options, naming the option.
 *
 * @example
 * ```ts
 * idempotency({ store, expiresAfterSeconds: -1 }) // throws IdempotencyConfigError: expiresAfterSeconds ...
 * ```
 */
export class IdempotencyConfigError extends IdempotencyError {
  constructor (message: string) {
    super(message)
    this.name = 'IdempotencyConfigError'
  }
}

/**
 * What `onFailure` is given when a whole-event handler *answers* with an HTTP 5xx instead of
 * throwing: a server error is a failure, not a result to replay. The client still
 * gets the response unchanged; this error only carries it to the retry policy (and, with
 * `'fail'`, its name and message into the FAILED record).
 *
 * @example
 * ```ts
 * idempotency({
 *   store,
 *   onFailure: (error) => error instanceof HttpServerErrorResponse && error.statusCode === 501 ? 'fail' : 'delete'
 * })
 * ```
 */
export class HttpServerErrorResponse extends Error {
  /** The response's status code, 500 or more. */
  readonly statusCode: number
  /** The response the handler (or a middleware inside ours) produced, as it was returned. */
  readonly response: unknown

  constructor (statusCode: number, response: unknown) {
    super(`the handler answered HTTP ${statusCode}`)
    this.name = 'HttpServerErrorResponse'
    this.statusCode = statusCode
    this.response = response
  }
}

/**
 * A record was not attempted: an earlier record of its ordering group (a FIFO message
 * group, a stream partition key) could not run, or the invocation timed out before it
 * started. It is reported failed so that it is redelivered in order, and its record is
 * released — never kept FAILED, whatever `onFailure` says, since it never ran.
 *
 * A hand-written handler that skips a record says so by rejecting it with this error.
 *
 * @example
 * ```ts
 * // in Promise.allSettled(event.Records.map(...)): a record skipped to keep its group's order
 * if (stopped.has(group)) throw new IdempotencyHeldBackError('an earlier record of its group failed', { group })
 * ```
 */
export class IdempotencyHeldBackError extends IdempotencyError {
  /** The ordering group held back (a FIFO `MessageGroupId`, a stream partition key), when there is one. */
  readonly group?: string

  constructor (reason = 'not attempted', options: { key?: string, group?: string } = {}) {
    super(`not attempted: ${reason}`, { key: options.key })
    this.name = 'IdempotencyHeldBackError'
    this.group = options.group
  }
}

/**
 * The record's `transact` writes were refused by the store: one of your conditions failed,
 * another transaction touched the same item, or an entry is invalid (or there are too
 * many). Nothing was written — neither your writes nor the completion — and `onFailure`
 * applies to the record.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyTransactError && error.code === 'ConditionalCheckFailed') {
 *   console.log('out of stock', error.entry)
 * }
 * ```
 */
export class IdempotencyTransactError extends IdempotencyError {
  /** Index of the refused entry in the order `transact` was given them, when one entry is to blame. */
  readonly entry?: number
  /**
   * DynamoDB's cancellation code (`ConditionalCheckFailed`, `TransactionConflict`, `ValidationError`...),
   * or `TooLarge`.
   */
  readonly code: string

  constructor (message: string, options: { key?: string, entry?: number, code: string, cause?: unknown }) {
    super(message, options)
    this.name = 'IdempotencyTransactError'
    this.code = options.code
    this.entry = options.entry
  }
}

/**
 * Our lease lapsed and another invocation took the record over before this one could
 * commit its `transact` writes: none of them was applied. The record is reported failed;
 * its redelivery replays what the new owner stores.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyLeaseLostError) metrics.increment('lease-lost')
 * ```
 */
export class IdempotencyLeaseLostError extends IdempotencyError {
  constructor (key: string) {
    super(`the lease on key ${key} was taken over by another invocation before the commit; nothing was written`,
      { key })
    this.name = 'IdempotencyLeaseLostError'
  }
}
