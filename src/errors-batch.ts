import { IdempotencyError } from './error-base.js'

/* The errors of batch mode: records held back, transact writes refused, a lease lost before the commit. */

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
    if (options.group !== undefined) this.group = options.group
  }
}

/**
 * The record's `transact` writes were refused by DynamoDB: one of your conditions failed,
 * another transaction touched the same item, or an entry is invalid (or there are too
 * many). Nothing was written — neither your writes nor the completion — and `onFailure`
 * applies to the record.
 *
 * @example
 * ```ts
 * if (error instanceof IdempotencyTransactError && error.code === 'ConditionalCheckFailed') console.log('out of stock', error.entry)
 * ```
 */
export class IdempotencyTransactError extends IdempotencyError {
  /** Index of the refused entry in the order `transact` was given them, when one entry is to blame. */
  readonly entry?: number
  /** DynamoDB's cancellation code (`ConditionalCheckFailed`, `TransactionConflict`, `ValidationError`...), or `TooLarge`. */
  readonly code: string

  constructor (message: string, options: { key?: string, entry?: number, code: string, cause?: unknown }) {
    super(message, options)
    this.name = 'IdempotencyTransactError'
    this.code = options.code
    if (options.entry !== undefined) this.entry = options.entry
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
    super(`the lease on key ${key} was taken over by another invocation before the commit; nothing was written`, { key })
    this.name = 'IdempotencyLeaseLostError'
  }
}
