/**
 * The part of Middy's request object the adapters use (same shape in Middy 5, 6 and 7).
 * `unknown`, not `any`: Middy's `.use()` intersects each middleware's event type with the
 * handler's, and `any` would erase the user's `SQSEvent`.
 */
export interface MiddyRequest {
  event: unknown
  context: unknown
  response: unknown
  error?: unknown
  earlyResponse?: unknown
}

/** An event-source adapter: how one kind of event is split into units of work and put back together. */
export interface Adapter {
  before: (request: MiddyRequest) => Promise<unknown>
  after: (request: MiddyRequest) => Promise<void>
  onError: (request: MiddyRequest) => Promise<void>
}
