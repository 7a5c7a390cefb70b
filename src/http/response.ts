/**
 * What whole-event mode needs to know about HTTP responses: which ones are failures, and how
 * a replayed one says so.
 */

/** An HTTP response as API Gateway (v1, v2), ALB and function URLs take it from Lambda. */
interface HttpResponse {
  statusCode: number
  headers?: Record<string, unknown>
  multiValueHeaders?: Record<string, unknown[]>
}

const isHttpResponse = (response: unknown): response is HttpResponse =>
  typeof response === 'object' && response !== null && !Array.isArray(response) &&
  Number.isInteger((response as { statusCode?: unknown }).statusCode)

/**
 * Any error status (4xx, 5xx). Near the deadline, one may be a custom `timeoutEarlyResponse`
 * (a 408, a 504) answering while the handler still runs: it must not be stored as the result.
 * A 5xx at any time is the server saying it failed, not an answer worth replaying for
 * `expiresAfterSeconds` (Stripe, for one, does not save 500s:
 * https://docs.stripe.com/api/idempotent_requests): it goes through `onFailure`.
 *
 * @example
 * ```ts
 * isErrorResponse({ statusCode: 408 }) // true
 * ```
 */
export const isErrorResponse = (response: unknown): response is HttpResponse =>
  isHttpResponse(response) && response.statusCode >= 400

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
