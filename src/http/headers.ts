/**
 * The headers of an HTTP event, as API Gateway, function URLs, ALB (in either mode) and VPC
 * Lattice pass them. Lattice's v2 event structure gives every value of `headers` as an array.
 */
export interface HeadersOf {
  headers?: Record<string, unknown> | null
  multiValueHeaders?: Record<string, unknown> | null
}

/**
 * A header's values whatever the case of its name: `headers` first, then `multiValueHeaders`.
 * An array value (in `multiValueHeaders`, or in a Lattice v2 event's `headers`) gives each of
 * its values.
 *
 * @example
 * ```ts
 * headerValues({
 *   headers: { 'Idempotency-Key': 'k-1' },
 *   multiValueHeaders: { 'idempotency-key': ['k-2'] }
 * }, 'idempotency-key') // ['k-1', 'k-2']
 * ```
 */
export const headerValues = (event: HeadersOf, name: string): unknown[] => {
  const wanted = name.toLowerCase()
  const found: unknown[] = []
  for (const source of [event.headers, event.multiValueHeaders]) {
    if (typeof source !== 'object' || source === null) continue
    for (const [header, value] of Object.entries(source)) {
      if (header.toLowerCase() !== wanted) continue
      if (Array.isArray(value)) found.push(...value)
      else found.push(value)
    }
  }
  return found
}
