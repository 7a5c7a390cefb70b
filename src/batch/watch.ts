import { deadlineWithin, remainingMs } from '../unit/lease.js'

/**
 * Calls `timedOut` when Middy's signal aborts and the timeout is this batch's own; answers the
 * function that stops listening.
 *
 * Middy aborts its signal when the early timeout fires, before the middleware's hooks run.
 * Middy 5 and 6 share one signal between every invocation of a process (Lambda Managed
 * Instances run several at once), and the one that timed out may be any of them, listening or
 * not (its handler had not reached `perRecord` yet). So only a batch whose own deadline is near
 * takes the abort as its own at once; any other is closed by its own invocation's hooks
 * (`closeOnTimeout`), a few microtasks later, when the timeout was its own.
 */
export const watchAbort = (
  signal: AbortSignal,
  context: unknown,
  timeoutMarginMs: number,
  timedOut: (reason: unknown) => void
): () => void => {
  const onAbort = (): void => {
    // Without a Lambda context (a local run) there is no deadline to judge by, nor another invocation.
    if (remainingMs(context) === undefined || deadlineWithin(context, timeoutMarginMs)) timedOut(signal.reason)
  }
  if (signal.aborted) onAbort()
  else signal.addEventListener('abort', onAbort, { once: true })
  return () => { signal.removeEventListener('abort', onAbort) }
}
