/** How a batch may use the store and run its records (the middleware's options). */
export interface BatchLimits {
  /** Most store requests at once (the `maxStoreRequests` option, or the store's own bound). */
  maxStoreRequests: number
  /**
   * Most records `perRecord` runs at once when it is given no bound of its own: the
   * `maxStoreRequests` option when set, else 50 — never a store's larger request bound, which
   * says what the store takes, not what the work downstream does.
   */
  recordConcurrency: number
  /** How close to the deadline a failure counts as a timeout (the `timeoutMarginMs` option). */
  timeoutMarginMs: number
}
