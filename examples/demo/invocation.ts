import { AsyncLocalStorage } from 'node:async_hooks'

/** What one invocation let the outside world see, gathered while it runs. */
export interface Observation {
  /** `A`, `B`... when two invocations overlap; empty otherwise. */
  label: string
  /** Payment ids the card gateway was asked to charge by this invocation, and how that went. */
  charges: Array<{ paymentId: string, chargeId?: string, error?: Error }>
  /** Why a record was reported failed, by messageId, as the loggers were told. */
  reasons: Map<string, unknown>
  /** Anything else the middleware logged (a lost lease, a store fault): shown, never expected. */
  notes: string[]
}

/**
 * Which invocation is running, for the card gateway and the loggers. Async context, not a
 * global "current step": two invocations that overlap each see their own.
 */
const current = new AsyncLocalStorage<Observation>()

export const observing = async <T>(
  label: string,
  invoke: () => Promise<T>
): Promise<{ result: T, seen: Observation }> => {
  const seen: Observation = { label, charges: [], reasons: new Map(), notes: [] }
  const result = await current.run(seen, invoke)
  return { result, seen }
}

export const currentObservation = (): Observation | undefined => current.getStore()
