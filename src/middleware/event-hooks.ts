import { HttpServerErrorResponse, IdempotencyInProgressError, IdempotencyStoreError } from '../errors.js'
import type { LifecycleConfig } from '../lifecycle/config.js'
import { leaseFor, originalError, timedOut, watchErrors, type Lease } from '../lifecycle/deadline.js'
import type { Selection } from '../keys/prepare.js'
import type { IdempotencyContext, MiddyRequest, ProblemDetails } from '../types.js'
import { fulfilled, rejected, type Settlement } from '../lifecycle/outcome.js'
import { queueTransact } from '../lifecycle/completion.js'
import { wholeEventLifecycle, type Admission, type RunningEvent } from '../lifecycle/whole-event.js'
import type { Hooks } from './idempotency.js'
import { base64PartsOf } from '../http/body.js'
import { defaultEventKey, defaultEventPayload, isHttpEvent, runsUnprotected, type CallerOf } from '../http/request.js'
import type { Selector } from '../keys/selector.js'
import type { Setup } from '../options.js'
import { errorStatusOf, markReplayed } from '../http/response.js'
import { NOT_RUN_AGAIN, problemOf, problemResponse, retryAfterSeconds } from '../http/problem.js'

/**
 * Whole events (HTTP, EventBridge, direct invocations): one event, one unit of work, keyed by the
 * request when HTTP.
 */
export const eventHooks = ({ resolved, config, selection }: Setup): Hooks => {
  const { caller } = resolved
  const eventKey: Selector = caller === undefined
    ? defaultEventKey
    : (unit, context) => defaultEventKey(unit, context, caller as CallerOf)
  // A key or payload path into a body sent base64-encoded (a binary media type) reads the decoded body.
  const eventSelection = selection({ key: eventKey, payload: defaultEventPayload }, 'the event', base64PartsOf)
  return wholeEventHooks(config, eventSelection, {
    timeoutMarginMs: resolved.timeoutMarginMs,
    // Only the default key leaves GET and the like without the header unprotected.
    ...(resolved.key === undefined ? { runsUnprotected } : {}),
    ...(resolved.responseHook === undefined ? {} : { responseHook: resolved.responseHook })
  })
}

/** What whole-event mode is told besides the lifecycle: see the options of the same names. */
export interface WholeEventOptions {
  timeoutMarginMs: number
  responseHook?: (response: unknown, info: { key: string, event: unknown }) => unknown
  /** Events that run without idempotency: nothing claimed, nothing stored (see `runsUnprotected`). */
  runsUnprotected?: (event: unknown) => boolean
}

/**
 * Whole-event mode (docs/architecture.md: whole events and HTTP): direct invoke, API Gateway, EventBridge... one event,
 * one unit of work. A duplicate returns the stored response without running the handler. The Middy
 * hooks of the whole-event lifecycle (`lifecycle/whole-event.ts`): `before` admits the event, `after`
 * and `onError` settle it; what is Middy's or HTTP's (problem answers, replays marked, `transact` on
 * the context, Middy's timeout) stays here.
 */
const wholeEventHooks = (config: LifecycleConfig, selection: Selection, options: WholeEventOptions): Hooks => {
  const lifecycle = wholeEventLifecycle(config, selection, 'event', options.timeoutMarginMs)
  const claims = new WeakMap<MiddyRequest, RunningEvent>()
  const replayed = new WeakSet<MiddyRequest>()
  /** HTTP requests we refused in `before`, and what their client is told (see `onError`). */
  const refused = new WeakMap<MiddyRequest, { problem: ProblemDetails, headers: Record<string, string> }>()

  /**
   * A refusal to throw, once the answer an HTTP client gets for it is noted; `lease`: the one this
   * request would hold.
   */
  const refusal = (request: MiddyRequest, error: unknown, lease?: Lease, answer = problemOf(error)): unknown => {
    const problem = isHttpEvent(request.event) ? answer : undefined
    if (problem !== undefined) refused.set(request, { problem, headers: retryAfterOf(error, lease) })
    return error
  }

  /**
   * When the client may come back (docs/http.md: errors and status codes). A 409: once the other
   * request's lease has ended, when another request can take the key over (its expiry, plus the
   * clock skew allowed). A 503: once this request's own claim, which the store may have written
   * without answering, has lapsed; the work never ran, so the retry runs it, once.
   */
  const retryAfterOf = (error: unknown, lease: Lease | undefined): Record<string, string> => {
    const nowMs = config.now()
    let untilMs: number | undefined
    if (error instanceof IdempotencyInProgressError) untilMs = error.leaseExpiresAt ?? nowMs
    else if (error instanceof IdempotencyStoreError && lease !== undefined) untilMs = lease.until
    if (untilMs === undefined) return {}
    return { 'Retry-After': String(retryAfterSeconds(untilMs + config.clockSkewMs, nowMs)) }
  }

  /** The stored response as this request gets it: marked as a replay for HTTP, then the user's hook. */
  const replayOf = async (request: MiddyRequest, key: string, stored: unknown): Promise<unknown> => {
    const response = isHttpEvent(request.event) ? markReplayed(stored) : stored
    return options.responseHook === undefined
      ? response
      : await options.responseHook(response, { key, event: request.event })
  }

  const before = async (request: MiddyRequest): Promise<unknown> => {
    if (options.runsUnprotected?.(request.event) === true) return undefined
    watchErrors(request)
    const lease = leaseFor(request.context, config.now)
    let admission: Admission
    try {
      admission = await lifecycle.admit(request.event, request.context, lease)
    } catch (error) {
      throw refusal(request, error, lease)
    }
    if (admission.kind === 'run') {
      const { key } = admission.unit
      claims.set(request, admission)
      // docs/architecture.md: transact: the handler queues its DynamoDB writes here; they commit with the completion.
      if (typeof request.context === 'object' && request.context !== null) {
        const transact = queueTransact(config, key, admission.writes, () => !admission.settled)
        const idempotency: IdempotencyContext = { key, transact }
        Object.assign(request.context, { idempotency })
      }
      return undefined
    }
    const response = await replayOf(request, admission.key, admission.response)
    // `earlyResponse` (Middy >= 6) is what makes an `undefined` result a response rather
    // than "go on and run the handler".
    replayed.add(request)
    request.earlyResponse = response
    return response
  }

  /** The lifecycle's one settlement; the clock or Middy's timeout says whether a failure came at the deadline. */
  const settle = async (request: MiddyRequest, running: RunningEvent,
    result: PromiseSettledResult<unknown>): Promise<Settlement> =>
    await lifecycle.settle(running, result, () => timedOut(request, options.timeoutMarginMs))

  const after = async (request: MiddyRequest): Promise<void> => {
    if (replayed.has(request)) {
      // Only Middy 5 gets here: it cannot respond early with `undefined`, so it ran the handler.
      config.log.error({
        message: 'idempotency: Middy 5 ran the handler of a duplicate whose stored result is undefined; ' +
          'return a value from the handler, or use Middy 6 or later'
      })
      return
    }
    const running = claims.get(request)
    if (running === undefined || running.settled) return
    const { response } = request
    // Near the deadline an error status may be a custom `timeoutEarlyResponse` (a 408, a 504)
    // answering while the handler still runs: the lease is kept. A 5xx otherwise is a
    // failure, returned unchanged; a 4xx is the handler's answer, stored as such.
    // A statusCode may be a string of an integer ('503'): API Gateway reads it as its number, and so do we.
    const status = errorStatusOf(response)
    if (status !== undefined && (status >= 500 || timedOut(request, options.timeoutMarginMs))) {
      await settle(request, running, rejected(new HttpServerErrorResponse(status, response)))
      return
    }
    const { result, onFailure } = await settle(request, running, fulfilled(response))
    if (result.status === 'rejected') {
      // Kept FAILED after work that ran (a result that cannot be stored, a transact write refused):
      // answered as its retries will be, not as "nothing happened, retry" under a new key.
      throw onFailure === 'fail' ? refusal(request, result.reason, undefined, NOT_RUN_AGAIN) : result.reason
    }
  }

  const onError = async (request: MiddyRequest): Promise<void> => {
    const answer = refused.get(request)
    if (answer !== undefined) {
      // The refusal stays `request.error` for every middleware; the client gets problem details,
      // whatever error handler the stack has or lacks. Set, not returned: a returned value would
      // stop Middy from running the `onError` hooks outside ours (an outer http-error-handler
      // then sees the response and leaves it be).
      request.response = problemResponse(answer.problem, request.event, request.response, answer.headers)
      return
    }
    const running = claims.get(request)
    if (running === undefined || running.settled) return
    // What was really thrown, not what a middleware inside ours (http-error-handler) made of it.
    await settle(request, running, rejected(originalError(request)))
  }

  return { before, after, onError }
}
