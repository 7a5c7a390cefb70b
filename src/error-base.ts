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
    if (options.key !== undefined) this.key = options.key
  }
}
