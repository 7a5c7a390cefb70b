/**
 * What whole-event mode needs to know about HTTP responses: which ones are failures, and how
 * a replayed one says so.
 */

/**
 * An HTTP response as API Gateway (v1, v2), ALB and function URLs take it from Lambda. Its
 * `statusCode` may be a string of an integer: API Gateway's REST proxy integration takes `'503'`
 * as 503, and AWS's own older Node.js blueprints answered so.
 */
interface HttpResponse {
  statusCode: number | string
  headers?: Record<string, unknown>
  multiValueHeaders?: Record<string, unknown[]>
}

// Digits only: no sign, no spaces, no exponent, no hex, which `Number()` would also take.
const INTEGER_TEXT = /^[0-9]{1,15}$/

/**
 * The status of `response` as a number, whether its `statusCode` is a number or a string of an
 * integer; undefined for anything that is no HTTP response. The response itself is left as the
 * handler gave it: only what the package reads of it is a number.
 *
 * @example
 * ```ts
 * statusOf({ statusCode: '503' }) // 503
 * statusOf({ statusCode: 'busy' }) // undefined
 * ```
 */
export const statusOf = (response: unknown): number | undefined => {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return undefined
  const { statusCode } = response as { statusCode?: unknown }
  if (typeof statusCode === 'number') return Number.isInteger(statusCode) ? statusCode : undefined
  return typeof statusCode === 'string' && INTEGER_TEXT.test(statusCode) ? Number(statusCode) : undefined
}

const isHttpResponse = (response: unknown): response is HttpResponse => statusOf(response) !== undefined

/**
 * The status of an error response (4xx, 5xx), else undefined. Near the deadline, one may be a
 * custom `timeoutEarlyResponse` (a 408, a 504) answering while the handler still runs: it must
 * not be stored as the result. A 5xx at any time is the server saying it failed, not an answer
 * worth replaying for `expiresAfterSeconds` (Stripe, for one, does not save 500s:
 * https://docs.stripe.com/api/idempotent_requests): it goes through `onFailure`.
 *
 * @example
 * ```ts
 * errorStatusOf({ statusCode: 408 }) // 408
 * errorStatusOf({ statusCode: '503' }) // 503
 * ```
 */
export const errorStatusOf = (response: unknown): number | undefined => {
  const status = statusOf(response)
  return status !== undefined && status >= 400 ? status : undefined
}

/** The header a replayed response carries, as the IETF Idempotency-Key draft's implementations do. */
export const REPLAYED_HEADER = 'Idempotent-Replayed'

/**
 * The stored response with `Idempotent-Replayed: true` added to its `headers` (and to its
 * `multiValueHeaders` when it has them, since ALB and API Gateway v1 then read those). Only a
 * structured response (one with a `statusCode`) has headers to add to; anything else, and the
 * stored response itself, are left unchanged.
 *
 * @example
 * ```ts
 * markReplayed({ statusCode: 201, body: '{}' })
 * // { statusCode: 201, body: '{}', headers: { 'Idempotent-Replayed': 'true' } }
 * ```
 */
export const markReplayed = (response: unknown): unknown => {
  if (!isHttpResponse(response)) return response
  const marked: HttpResponse = { ...response, headers: { ...response.headers, [REPLAYED_HEADER]: 'true' } }
  if (typeof response.multiValueHeaders === 'object' && response.multiValueHeaders !== null) {
    marked.multiValueHeaders = { ...response.multiValueHeaders, [REPLAYED_HEADER]: ['true'] }
  }
  return marked
}
