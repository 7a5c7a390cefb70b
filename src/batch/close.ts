import { IdempotencyHeldBackError } from '../errors.js'
import { rejected } from '../lifecycle/outcome.js'
import type { Batch } from './batch.js'
import type { ReadAnswer } from './answer.js'
import { heldBackError } from './schedule.js'

/**
 * The deadline came (docs/architecture.md: the batch flow, timeouts): records still running
 * keep their leases (they lapse with this invocation); records `perRecord` had not started are
 * released, never run twice.
 */
export const closeOnTimeout = async (batch: Batch): Promise<void> => {
  batch.close(true)
  // Each record still running is logged once, with its outcome (timed out, lease kept).
  if (!batch.scheduled) return
  await batch.settleEach(async (state) => {
    const { phase } = state.fate
    if (phase === 'handed' || phase === 'not-started') {
      batch.notStarted(state)
      await batch.settleAtOnce(state, rejected(heldBackError('closed')))
    }
  })
}

const NOT_STARTED = 'the invocation failed before the handler started it ' +
  '(a middleware inside idempotency, or the handler before reading it)'

/**
 * The handler or a middleware inside ours failed with `error`, before the deadline. Nothing
 * can have run a record that nobody read (a middleware failed in `before`), nor, with
 * `perRecord`, one it did not start: those are released whatever `onFailure` says.
 * `perRecordHandler`: the middleware's handler is known to be `perRecord` (see HandlerKind, middleware/batch-hooks.ts).
 */
export const closeOnError = async (batch: Batch, error: unknown, perRecordHandler: boolean): Promise<void> => {
  batch.close(false)
  const handlerMayHaveRun = batch.scheduled || batch.handlerCalled || (batch.recordsRead && !perRecordHandler)
  await batch.settleEach(async (state) => {
    const { phase } = state.fate
    // A record perRecord is still running settles itself when its work ends.
    if (phase === 'running') return
    const started = handlerMayHaveRun && (!batch.scheduled || (phase !== 'handed' && phase !== 'not-started'))
    await batch.settleAtOnce(state, rejected(started ? error : new IdempotencyHeldBackError(NOT_STARTED)))
  })
}

/**
 * A hand-written handler answered, and its answer was read: each record it ran settles with its
 * result. Cut off at the deadline, what failed from here may have taken effect, and keeps its lease.
 */
export const closeOnAnswer = async (batch: Batch, read: ReadAnswer): Promise<void> => {
  if (read.cutOff === true) batch.close(true)
  const results = new Map(batch.run.map((state, i) => [state, read.results[i] as PromiseSettledResult<unknown>]))
  await batch.settleEach(async (state) => {
    await batch.settle(state, results.get(state) as PromiseSettledResult<unknown>)
  })
}

/**
 * The handler ran but its answer cannot be read: some records may have taken effect. Each
 * unsettled one is kept FAILED rather than released to run again.
 */
export const closeOnUnreadableAnswer = async (batch: Batch, error: unknown): Promise<void> => {
  await batch.settleEach(async (state) => { await batch.keepFailed(state, error) })
}
