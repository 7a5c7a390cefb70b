/** A call a burst carries: settled by the request that sends it. */
export interface BurstCall { reject: (error: unknown) => void }

/** How a store sends its calls in requests of many. */
export interface BurstOptions<C extends BurstCall> {
  /** Calls one request carries at most. */
  maxCalls: number
  /** Sends one request of calls and settles each of them. */
  send: (calls: C[]) => Promise<void>
  /** When set, no request carries two calls of one key: the second goes in another request. */
  keyOf?: (call: C) => string
  /**
   * When true, calls made while a request is out wait for it, and leave together as soon as
   * the last one out returns: one round trip at most, and no timer.
   */
  oneAtATime?: boolean
}

/**
 * Gathers the calls of one burst of work (the claims of a batch, issued together; the
 * completions of records whose work ended together) into requests of up to `maxCalls`. The
 * burst ends when Node's current run of callbacks and promise reactions does
 * (`process.nextTick`): no call waits for a timer. The Redis store sends each burst at once
 * (one script command per burst); the DynamoDB store, one burst at a time (`oneAtATime`).
 */
export class Burst<C extends BurstCall> {
  #pending: C[] = []
  #scheduled = false
  #inFlight = 0

  constructor (private readonly options: BurstOptions<C>) {}

  add (call: C): void {
    this.#pending.push(call)
    this.#schedule()
  }

  #schedule (): void {
    if (this.#scheduled || this.#pending.length === 0) return
    if (this.options.oneAtATime === true && this.#inFlight > 0) return
    this.#scheduled = true
    process.nextTick(() => { this.#flush() })
  }

  #flush (): void {
    this.#scheduled = false
    const requests = split(this.#pending, this.options.maxCalls, this.options.keyOf)
    this.#pending = []
    this.#inFlight += requests.length
    for (const calls of requests) {
      this.options.send(calls)
        // `send` settles its calls; should it throw all the same, none of them is left waiting.
        .catch((error: unknown) => { for (const call of calls) call.reject(error) })
        .finally(() => {
          this.#inFlight--
          this.#schedule()
        })
    }
  }
}

/** `calls` in requests of at most `max`, in order, none holding one key twice. */
const split = <C>(calls: readonly C[], max: number, keyOf?: (call: C) => string): C[][] => {
  if (keyOf === undefined) {
    const requests: C[][] = []
    for (let i = 0; i < calls.length; i += max) requests.push(calls.slice(i, i + max))
    return requests
  }
  const requests: Array<{ calls: C[], keys: Set<string> }> = []
  for (const call of calls) {
    const key = keyOf(call)
    let request = requests.find((r) => r.calls.length < max && !r.keys.has(key))
    if (request === undefined) requests.push(request = { calls: [], keys: new Set() })
    request.calls.push(call)
    request.keys.add(key)
  }
  return requests.map((r) => r.calls)
}
