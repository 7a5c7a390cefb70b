import { claim } from '../lifecycle/claim.js'
import type { LifecycleConfig, Unit } from '../lifecycle/config.js'
import { isMiddyTimeout, leaseFor } from '../lifecycle/lease.js'
import { prepareUnit, type Selection } from '../lifecycle/prepare.js'
import { complete, fail } from '../lifecycle/settle.js'
import type { Adapter, MiddyRequest } from './adapter.js'

interface Claimed { unit: Unit, leaseToken: string, settled: boolean }

/**
 * Whole-event mode (DESIGN §4): direct invoke, API Gateway, EventBridge... one event,
 * one unit of work. A duplicate returns the stored response without running the handler.
 */
export const wholeEventAdapter = (config: LifecycleConfig, selection: Selection): Adapter => {
  const claims = new WeakMap<MiddyRequest, Claimed>()

  const before = async (request: MiddyRequest): Promise<unknown> => {
    const unit = prepareUnit(selection, request.event, request.context, 1, 'event')
    const outcome = await claim(config, unit, leaseFor(request.context, config.now))
    if (outcome.kind === 'rejected') throw outcome.error
    if (outcome.kind === 'run') {
      claims.set(request, { unit, leaseToken: outcome.leaseToken, settled: false })
      return undefined
    }
    // Replay. `earlyResponse` (Middy >= 6) is what makes an `undefined` result a response
    // rather than "go on and run the handler".
    request.earlyResponse = outcome.response
    return outcome.response
  }

  const after = async (request: MiddyRequest): Promise<void> => {
    const claimed = claims.get(request)
    if (claimed === undefined || claimed.settled) return
    claimed.settled = true
    const result = await complete(config, claimed.unit, claimed.leaseToken, request.response)
    if (result.status === 'rejected') throw result.reason
  }

  const onError = async (request: MiddyRequest): Promise<void> => {
    const claimed = claims.get(request)
    if (claimed === undefined || claimed.settled) return
    claimed.settled = true
    if (isMiddyTimeout(request.error)) {
      config.logger.warn({ message: 'idempotency: timed out; lease kept until it lapses', key: claimed.unit.key })
      return
    }
    await fail(config, claimed.unit, claimed.leaseToken, request.error)
  }

  return { before, after, onError }
}
