/**
 * Whether a middleware's handler is `perRecord`, known before it serves a batch.
 *
 * Middy never shows a middleware its handler (it is a closure of `middy()`), and a middleware
 * inside ours may fail in `before` after reading the records (a validator): with `perRecord` the
 * records then never ran, with a hand-written handler that read them they may have. So the
 * answer must exist on a cold instance, before any batch, and cannot be learned from batches.
 *
 * What links a stack's middleware and its handler is only that they are built together, in the
 * same synchronous stretch of code (a module's top level, a factory): `idempotency()` and
 * `perRecord()` note themselves on the current construction turn, which ends at the next
 * microtask. A turn that built exactly one `idempotency` and exactly one `perRecord` built one
 * stack. Any other count (a module exporting several handlers) is ambiguous, and the handler is
 * taken for one that may have run whatever it read: the safe side, since releasing records that
 * ran would run them twice. This is construction state, never an invocation's: on Lambda Managed
 * Instances, concurrent invocations only read it.
 *
 * Kept on `globalThis` under `Symbol.for`, so that the CommonJS and ESM builds of this package,
 * loaded side by side, note themselves on the same turn.
 */
const TURN = Symbol.for('middy-idempotency.construction-turn')

/** What one synchronous stretch of code built. */
interface Turn { middlewares: number, perRecords: number }

/** The turn a middleware was built in: read when a batch needs the answer, after the turn ended. */
export interface HandlerKind { readonly perRecord: boolean }

const currentTurn = (): Turn => {
  const holder = globalThis as unknown as Record<typeof TURN, Turn | undefined>
  let turn = holder[TURN]
  if (turn === undefined) {
    turn = { middlewares: 0, perRecords: 0 }
    Object.defineProperty(holder, TURN, { value: turn, enumerable: false, configurable: true, writable: true })
    queueMicrotask(() => { holder[TURN] = undefined })
  }
  return turn
}

/** `perRecord` notes that it built a handler. */
export const notePerRecord = (): void => { currentTurn().perRecords++ }

/** `idempotency` notes that it built a middleware, and is told, once its turn has ended, whether its handler is `perRecord`. */
export const noteMiddleware = (): HandlerKind => {
  const turn = currentTurn()
  turn.middlewares++
  return { get perRecord () { return turn.middlewares === 1 && turn.perRecords === 1 } }
}
