/** The part of Middy's request object the adapters use (same shape in Middy 5, 6 and 7). */
export interface MiddyRequest {
  event: any
  context: any
  response: any
  error?: unknown
  earlyResponse?: unknown
}

/** An event-source adapter: how one kind of event is split into units of work and put back together. */
export interface Adapter {
  before: (request: MiddyRequest) => Promise<unknown>
  after: (request: MiddyRequest) => Promise<void>
  onError: (request: MiddyRequest) => Promise<void>
}
