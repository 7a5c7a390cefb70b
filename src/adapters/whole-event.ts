import { HttpServerErrorResponse } from '../errors.js'
import { claim } from '../lifecycle/claim.js'
import type { LifecycleConfig, Unit } from '../lifecycle/config.js'
import { leaseFor } from '../lifecycle/lease.js'
import { prepareUnit, type Selection } from '../lifecycle/prepare.js'
import { kindOfRefusal, reportOutcome } from '../lifecycle/report.js'
import type { IdempotencyContext, OutcomeReport } from '../types.js'
import { commitWithCompletion } from '../lifecycle/commit.js'
import { applyOnFailure, complete } from '../lifecycle/settle.js'
import { queueTransact } from '../lifecycle/transact.js'
import { originalError, timedOut, watchErrors } from '../lifecycle/timeout.js'
import type { Adapter, MiddyRequest } from './adapter.js'
import { isHttpEvent } from './http.js'
import { isErrorResponse, markReplayed } from './http-response.js'

interface Claimed { unit: Unit, leaseToken: string, settled: boolean, writes: unknown[] }

/** What whole-event mode is told besides the lifecycle: see the options of the same names. */
export interface WholeEventOptions {
  timeoutMarginMs: number
  responseHook?: (response: unknown, info: { key: string, event: unknown }) => unknown
  /** Events that run without idempotency: nothing claimed, nothing stored (see `runsUnprotected`). */
  runsUnprotected?: (event: unknown) => boolean
}

/**
 * Whole-event mode (docs/architecture.md: whole events and HTTP): direct invoke, API Gateway, EventBridge... one event,
 * one unit of work. A duplicate returns the stored response without running the handler.
 */
export const wholeEventAdapter = (config: LifecycleConfig, selection: Selection, options: WholeEventOptions): Adapter => {
  const claims = new WeakMap<MiddyRequest, Claimed>()
  const replayed = new WeakSet<MiddyRequest>()

  const report = (outcome: OutcomeReport): void => { reportOutcome(config.onOutcome, config.logger, outcome) }

  /** The stored response as this request gets it: marked as a replay for HTTP, then the user's hook. */
  const replayOf = async (request: MiddyRequest, key: string, stored: unknown): Promise<unknown> => {
    const response = isHttpEvent(request.event) ? markReplayed(stored) : stored
    return options.responseHook === undefined ? response : await options.responseHook(response, { key, event: request.event })
  }

  const before = async (request: MiddyRequest): Promise<unknown> => {
    if (options.runsUnprotected?.(request.event) === true) return undefined
    watchErrors(request)
    let unit: Unit
    try {
      unit = prepareUnit(selection, request.event, request.context, 1, 'event')
    } catch (error) {
      report({ kind: 'no-key', error })
      throw error
    }
    const outcome = await claim(config, unit, leaseFor(request.context, config.now))
    if (outcome.kind === 'rejected') {
      report({ kind: kindOfRefusal(outcome.error), key: unit.key, error: outcome.error })
      throw outcome.error
    }
    if (outcome.kind === 'run') {
      const claimed: Claimed = { unit, leaseToken: outcome.leaseToken, settled: false, writes: [] }
      claims.set(request, claimed)
      // docs/architecture.md: transact: the handler queues its DynamoDB writes here; they commit with the completion.
      if (typeof request.context === 'object' && request.context !== null) {
        const idempotency: IdempotencyContext = { key: unit.key, transact: queueTransact(config, unit.key, claimed.writes, () => !claimed.settled) }
        Object.assign(request.context, { idempotency })
      }
      return undefined
    }
    report({ kind: 'replayed', key: unit.key })
    const response = await replayOf(request, unit.key, outcome.response)
    // `earlyResponse` (Middy >= 6) is what makes an `undefined` result a response rather
    // than "go on and run the handler".
    replayed.add(request)
    request.earlyResponse = response
    return response
  }

  /** Keeps the lease when the invocation ran out of time: the handler may still be working. */
  const keepIfTimedOut = (request: MiddyRequest, claimed: Claimed, error: unknown): boolean => {
    if (!timedOut(request, options.timeoutMarginMs)) return false
    config.logger.warn({ message: 'idempotency: timed out; lease kept until it lapses', key: claimed.unit.key })
    report({ kind: 'timed-out', key: claimed.unit.key, error })
    return true
  }

  const after = async (request: MiddyRequest): Promise<void> => {
    if (replayed.has(request)) {
      // Only Middy 5 gets here: it cannot respond early with `undefined`, so it ran the handler.
      config.logger.error({ message: 'idempotency: Middy 5 ran the handler of a duplicate whose stored result is undefined; return a value from the handler, or use Middy 6 or later' })
      return
    }
    const claimed = claims.get(request)
    if (claimed === undefined || claimed.settled) return
    claimed.settled = true
    const { response } = request
    if (isErrorResponse(response)) {
      // Near the deadline an error status may be a custom `timeoutEarlyResponse` (a 408, a 504)
      // answering while the handler still runs: the lease is kept. A 5xx otherwise is a
      // failure, returned unchanged; a 4xx is the handler's answer, stored as such.
      const error = new HttpServerErrorResponse(response.statusCode, response)
      if (keepIfTimedOut(request, claimed, error)) return
      if (response.statusCode >= 500) {
        await applyOnFailure(config, claimed.unit, claimed, error)
        report({ kind: 'failed', key: claimed.unit.key, error })
        return
      }
    }
    const { result, kind } = claimed.writes.length > 0
      ? await commitWithCompletion(config, claimed.unit, claimed, response, claimed.writes)
      : await complete(config, claimed.unit, claimed.leaseToken, response)
    if (result.status === 'rejected') {
      report({ kind, key: claimed.unit.key, error: result.reason })
      throw result.reason
    }
    report({ kind, key: claimed.unit.key })
  }

  const onError = async (request: MiddyRequest): Promise<void> => {
    const claimed = claims.get(request)
    if (claimed === undefined || claimed.settled) return
    claimed.settled = true
    // What was really thrown, not what a middleware inside ours (http-error-handler) made of it.
    const error = originalError(request)
    if (keepIfTimedOut(request, claimed, error)) return
    await applyOnFailure(config, claimed.unit, claimed, error)
    report({ kind: 'failed', key: claimed.unit.key, error })
  }

  return { before, after, onError }
}
