/**
 * An error's class as a message can name it: its `name`, or, for a subclass that sets none of
 * its own (node-redis's `TimeoutError`, whose `name` is `Error`), its constructor's.
 *
 * @example
 * ```ts
 * errorName(new (class TimeoutError extends Error {})()) // 'TimeoutError'
 * ```
 */
export const errorName = (error: unknown): string => {
  const { name, constructor } = (error ?? {}) as { name?: unknown, constructor?: { name?: unknown } }
  if (typeof name === 'string' && name !== '' && name !== 'Error') return name
  return typeof constructor?.name === 'string' && constructor.name !== '' && constructor.name !== 'Object'
    ? constructor.name
    : 'Error'
}

/**
 * An error's own words for a message: its `message`, or, when it has none (node-redis's
 * `TimeoutError`), its class and `(no message)`, never an empty string.
 *
 * @example
 * ```ts
 * errorMessage(new (class TimeoutError extends Error {})()) // 'TimeoutError (no message)'
 * ```
 */
export const errorMessage = (error: unknown): string => {
  const message = (error as { message?: unknown } | null | undefined)?.message
  if (typeof message === 'string' && message !== '') return message
  return error instanceof Error ? `${errorName(error)} (no message)` : String(error)
}

/**
 * `name: message` of an error, as a store error quotes its cause; `TimeoutError (no message)`
 * for one without a message.
 *
 * @example
 * ```ts
 * errorText(new RangeError('too big')) // 'RangeError: too big'
 * ```
 */
export const errorText = (error: unknown): string => {
  const message = (error as { message?: unknown } | null | undefined)?.message
  return typeof message === 'string' && message !== '' ? `${errorName(error)}: ${message}` : errorMessage(error)
}

/**
 * A stored time (`epochMs`, epoch milliseconds) as ISO text, or as the number stored (`stored`, when
 * it was in other units) when no `Date` can hold it (beyond ±8.64e15 ms, not a number): a record
 * another version or a bug wrote is still shown, not a `RangeError` thrown, since the operator
 * reading it is the one who must repair it.
 *
 * @example
 * ```ts
 * timeText(Date.UTC(2026, 0, 1)) // '2026-01-01T00:00:00.000Z'
 * timeText(Number.MAX_SAFE_INTEGER) // '9007199254740991'
 * timeText(9e12 * 1000, 9e12) // '9000000000000' (an expiry in epoch seconds)
 * ```
 */
export const timeText = (epochMs: number, stored: number = epochMs): string =>
  // `toJSON` is `toISOString`, or null for an invalid date (ECMA-262 §21.4.4.37), where the other throws.
  (new Date(epochMs).toJSON() as string | null) ?? String(stored)
