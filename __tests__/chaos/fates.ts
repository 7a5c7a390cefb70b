import type { CrashPhase, InvocationFate } from './invocation.js'
import { streamFor } from './prng.js'

/** How often each misfortune strikes. Probabilities per invocation unless said otherwise. */
export interface Rates {
  /** Per payment: the producer sends it again under a new messageId. */
  producerDuplicate: number
  /** The function's answer never reaches the queue: the whole batch comes back. */
  lostAck: number
  /** The handler throws before any effect: the whole batch fails. */
  handlerThrow: number
  /** Per delivery of a record: the charge fails this time. */
  transientFailure: number
  /** Per payment: the charge always fails (it ends in the DLQ). */
  permanentFailure: number
  /** The process dies at one of the steps of {@link CRASH_PHASES}. */
  crash: number
  /** The handler works so long it nears or passes its deadline. */
  slow: number
  /** Per (invocation, store step, key): the store request is refused, loses its answer, or is slow (store-faults.ts). */
  storeFault: number
  /**
   * Per payment: its work makes what cannot be stored — a result over DynamoDB's 400 KB item
   * (ledger effects), or a `transact` write over it, which DynamoDB refuses with a
   * `ValidationException` (transact effects). It ends kept FAILED and dead-lettered.
   */
  oversized: number
}

/** The crashes an invocation's fate may choose (timeouts come from slow handlers instead). */
export const CRASH_PHASES: readonly CrashPhase[] = ['after-claim', 'mid-batch', 'after-effects', 'completion-before-write', 'completion-after-write']

/** The misfortune of invocation `id`, from the seed alone. */
export const fateOf = (seed: number, id: string, records: number, rates: Rates, functionTimeoutMs: number): InvocationFate => {
  const r = streamFor(seed, 'invocation', id)
  const crash = r.chance(rates.crash) ? r.pick(CRASH_PHASES) : undefined
  const crashAfterRecords = r.int(1, Math.max(1, records))
  const throwAtEntry = r.chance(rates.handlerThrow)
  const lostAck = r.chance(rates.lostAck)
  const slow = r.chance(rates.slow)
  // Slow either before the batch starts (the whole batch times out unstarted) or in its last
  // record, once the others have settled (a timeout in the middle of a batch).
  const slowRecord = slow && r.chance(0.5)
  // Slow work ends somewhere between well inside and well past the deadline.
  const slowMs = r.int(Math.floor(functionTimeoutMs * 0.6), Math.floor(functionTimeoutMs * 1.2))
  const workMs = slow && !slowRecord ? slowMs : r.int(5, 800)
  const slowRecordMs = slowRecord ? slowMs : 0
  const tailMs = slowRecord && r.chance(0.5) ? r.int(Math.floor(functionTimeoutMs * 0.1), Math.floor(functionTimeoutMs * 0.6)) : 0
  return { ...(crash === undefined ? {} : { crash }), crashAfterRecords, throwAtEntry, lostAck, workMs, slowRecordMs, tailMs }
}
