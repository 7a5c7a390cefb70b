import { base64PartsOf } from '../http/body.js'
import { defaultEventKey, defaultEventPayload, runsUnprotected, type CallerOf } from '../http/request.js'
import type { Selector } from '../keys/selector.js'
import { wholeEventAdapter } from './event-hooks.js'
import type { Hooks } from './idempotency.js'
import type { Setup } from './setup.js'

/**
 * Whole events (HTTP, EventBridge, direct invocations): one event, one unit of work, keyed by the
 * request when HTTP.
 */
export const eventFamily = ({ resolved, config, selection }: Setup): Hooks => {
  const { caller } = resolved
  const eventKey: Selector = caller === undefined
    ? defaultEventKey
    : (unit, context) => defaultEventKey(unit, context, caller as CallerOf)
  // A key or payload path into a body sent base64-encoded (a binary media type) reads the decoded body.
  const eventSelection = selection({ key: eventKey, payload: defaultEventPayload }, 'the event', base64PartsOf)
  return wholeEventAdapter(config, eventSelection, {
    timeoutMarginMs: resolved.timeoutMarginMs,
    // Only the default key leaves GET and the like without the header unprotected.
    ...(resolved.key === undefined ? { runsUnprotected } : {}),
    ...(resolved.responseHook === undefined ? {} : { responseHook: resolved.responseHook })
  })
}
