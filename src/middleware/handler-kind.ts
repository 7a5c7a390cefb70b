/**
 * Whether a middleware's handler is `perRecord`, as far as the middleware knows.
 *
 * Middy never shows a middleware its handler (it is a closure of `middy()`), and a middleware
 * inside ours may fail in `before` after reading the records (a validator): with `perRecord` the
 * records then never ran, with a hand-written handler that read them they may have. Releasing
 * records that ran would run them twice; keeping FAILED records that never ran leaves them to the
 * operator (`middy-idempotency release`). So the middleware assumes the handler may have run what
 * it read until it knows better: once `perRecord` has been called with one of its batches, a fact
 * about the stack that only ever becomes true (no invocation's state: on Lambda Managed Instances
 * concurrent invocations only read it, or set it to the same value).
 *
 * Pairing a middleware with a `perRecord` built in the same synchronous stretch of code was tried
 * and dropped: a `perRecord` built there for another stack (two handlers in one module, a library
 * module evaluated in the same turn) paired with a hand-written handler, whose charged records
 * were then released and charged again (docs/batches.md: a middleware after `idempotency` that fails in `before`).
 */
export class HandlerKind {
  #perRecord = false

  /** `perRecord` has been called with a batch of this middleware. */
  get perRecord (): boolean { return this.#perRecord }

  /** Told of each batch the middleware answers: `perRecord` took part in it. */
  learn (batch: { scheduled: boolean, handlerCalled: boolean }): void {
    if (batch.scheduled || batch.handlerCalled) this.#perRecord = true
  }
}
