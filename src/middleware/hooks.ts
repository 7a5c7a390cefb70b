import type { MiddyRequest } from '../types.js'

export type { MiddyRequest }

/** An event-source adapter: how one kind of event is split into units of work and put back together. */
export interface Adapter {
  before: (request: MiddyRequest) => Promise<unknown>
  after: (request: MiddyRequest) => Promise<void>
  onError: (request: MiddyRequest) => Promise<void>
}
