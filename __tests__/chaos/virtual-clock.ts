/**
 * Virtual time: nothing in the chaos suite waits for real time. The scheduler moves the
 * clock from one event to the next (a message becoming visible, a slow handler waking up,
 * a Lambda deadline), so visibility timeouts, lease lapses and expiry are deterministic.
 */
export class VirtualClock {
  #now: number

  constructor (start = Date.UTC(2030, 0, 1)) {
    this.#now = start
  }

  /** True time, epoch milliseconds. */
  now (): number {
    return this.#now
  }

  advanceTo (ms: number): void {
    // Time never goes back: a stale event in the past is simply due now.
    if (ms > this.#now) this.#now = ms
  }

  /** A host's view of the clock: true time plus its skew (positive: the host runs ahead). */
  skewed (offsetMs: number): () => number {
    return () => this.#now + offsetMs
  }
}
