/** The headers of an HTTP event, as API Gateway, function URLs and ALB (in either mode) pass them. */
export interface HeadersOf { headers?: Record<string, unknown> | null, multiValueHeaders?: Record<string, unknown> | null }

/**
 * A header's values whatever the case of its name: `headers` first, then `multiValueHeaders`.
 *
 * @example
 * ```ts
 * headerValues({ headers: { 'Idempotency-Key': 'k-1' }, multiValueHeaders: { 'idempotency-key': ['k-2'] } }, 'idempotency-key') // ['k-1', 'k-2']
 * ```
 */
export const headerValues = (event: HeadersOf, name: string): unknown[] => {
  const wanted = name.toLowerCase()
  const found: unknown[] = []
  for (const [source, multi] of [[event.headers, false], [event.multiValueHeaders, true]] as const) {
    if (typeof source !== 'object' || source === null) continue
    for (const [header, value] of Object.entries(source)) {
      if (header.toLowerCase() !== wanted) continue
      if (multi && Array.isArray(value)) found.push(...value)
      else found.push(value)
    }
  }
  return found
}
