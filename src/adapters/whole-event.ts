import { claim } from '../lifecycle/claim.js'
import type { LifecycleConfig, Unit } from '../lifecycle/config.js'
import { isMiddyTimeout, leaseFor } from '../lifecycle/lease.js'
import { prepareUnit, type Selection } from '../lifecycle/prepare.js'
import { kindOfRefusal, reportOutcome, type UnitOutcome } from '../lifecycle/report.js'
import { applyOnFailure, complete } from '../lifecycle/settle.js'
import type { Adapter, MiddyRequest } from './adapter.js'

interface Claimed { unit: Unit, leaseToken: string, settled: boolean }

/**
 * Whole-event mode (DESIGN §4): direct invoke, API Gateway, EventBridge... one event,
 * one unit of work. A duplicate returns the stored response without running the handler.
 */
export const wholeEventAdapter = (config: LifecycleConfig, selection: Selection): Adapter => {
  const claims = new WeakMap<MiddyRequest, Claimed>()
  const replayed = new WeakSet<MiddyRequest>()

  const report = (outcome: UnitOutcome): void => { reportOutcome(config.onOutcome, config.logger, outcome) }

  const before = async (request: MiddyRequest): Promise<unknown> => {
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
      claims.set(request, { unit, leaseToken: outcome.leaseToken, settled: false })
      return undefined
    }
    report({ kind: 'replayed', key: unit.key })
    // Replay. `earlyResponse` (Middy >= 6) is what makes an `undefined` result a response
    // rather than "go on and run the handler".
    replayed.add(request)
    request.earlyResponse = outcome.response
    return outcome.response
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
    const { result, kind } = await complete(config, claimed.unit, claimed.leaseToken, request.response)
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
    if (isMiddyTimeout(request.error)) {
      config.logger.warn({ message: 'idempotency: timed out; lease kept until it lapses', key: claimed.unit.key })
      report({ kind: 'timed-out', key: claimed.unit.key, error: request.error })
      return
    }
    await applyOnFailure(config, claimed.unit, claimed.leaseToken, request.error)
    report({ kind: 'failed', key: claimed.unit.key, error: request.error })
  }

  return { before, after, onError }
}
