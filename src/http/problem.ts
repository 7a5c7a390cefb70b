import {
  IdempotencyFailedError, IdempotencyInProgressError, IdempotencyKeyError, IdempotencyPayloadMismatchError,
  IdempotencyStoreError
} from '../errors.js'
import type { ProblemDetails } from '../types.js'
import { isLatticeEvent } from './lattice.js'

/**
 * How an HTTP request the middleware refuses is answered (docs/architecture.md: whole events and
 * HTTP): as RFC 9457 problem details, which the IETF `Idempotency-Key` header draft recommends
 * for its three refusals (https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/).
 */

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/**
 * What a client is told when the store cannot take its request's claim: it did not answer by the
 * invocation's deadline, or failed (throttled after the SDK's retries, unreachable). Nothing ran;
 * the request may be sent again. RFC 9110 §15.6.4: the server cannot handle it now.
 */
export const STORE_UNAVAILABLE: ProblemDetails = {
  type: 'about:blank',
  title: 'Service Unavailable',
  status: 503,
  detail: 'Nothing was done. Retry this request later, with the same idempotency key.'
}

/**
 * What a client is told when its key is kept FAILED (`IdempotencyFailedError`), and when its own
 * request ended so (a result that cannot be stored, a transact write refused): the request is not
 * run again with that key, and it may have taken effect. A bare 500 or 502 reads as "nothing happened, retry", which
 * leads to a new key and runs the work again.
 */
export const NOT_RUN_AGAIN: ProblemDetails = {
  type: 'about:blank',
  title: 'Internal Server Error',
  status: 500,
  detail: 'This idempotency key does not run the request again: it failed, or its result could not be stored, ' +
    'and it may have taken effect. Check what it did before you send it with a new key.'
}

/**
 * The client's words of a refusal an HTTP request gets (a 400 key error, a 409, a 422, a 503 when
 * the store cannot take its claim, a 500 for a key that failed before), or undefined for any other
 * error, which the stack answers as it answers any error.
 *
 * @example
 * ```ts
 * problemOf(new IdempotencyPayloadMismatchError('k'))
 * // { type: 'about:blank', title: 'Unprocessable Content', status: 422, detail: '...' }
 * ```
 */
export const problemOf = (error: unknown): ProblemDetails | undefined => {
  if (error instanceof IdempotencyInProgressError || error instanceof IdempotencyPayloadMismatchError ||
    error instanceof IdempotencyKeyError) return error.problem
  if (error instanceof IdempotencyFailedError) return NOT_RUN_AGAIN
  return error instanceof IdempotencyStoreError && error.operation === 'claim' ? STORE_UNAVAILABLE : undefined
}

/**
 * A `Retry-After` (RFC 9110 §10.2.3) in whole seconds until `untilMs`, rounded up so that a client
 * that waits as told comes back after it, and at least 1.
 *
 * @example
 * ```ts
 * retryAfterSeconds(10_500, 0) // 11
 * ```
 */
export const retryAfterSeconds = (untilMs: number, nowMs: number): number =>
  Math.max(1, Math.ceil((untilMs - nowMs) / 1000))

type Headers = Record<string, unknown>

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What a refusal's answer replaces of a response built inside ours: what described its body, and its
 * `Retry-After`.
 */
const REPLACED_HEADERS = /^(content-(type|length)|retry-after)$/i

/** Headers without the ones the refusal's answer replaces, whatever their case. */
const withoutBodyHeaders = (headers: unknown): Headers =>
  Object.fromEntries(Object.entries(isObject(headers) ? headers : {}).filter(([name]) => !REPLACED_HEADERS.test(name)))

/**
 * The response to a refused HTTP request, with `headers` of its own (a `Retry-After`). A response
 * already built by a middleware inside ours (`@middy/http-error-handler` turns the error into a
 * `text/plain` message; `@middy/http-cors` adds its headers) keeps its other headers; its status,
 * body and `Retry-After` are replaced. An event with `multiValueHeaders` (API Gateway REST, ALB with
 * multi-value headers on, where ALB reads only those) gets them in the response too. An ALB or a
 * VPC Lattice event gets the status line as their answers carry it (`statusDescription`:
 * https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html,
 * https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html).
 *
 * @example
 * ```ts
 * problemResponse(problem, { rawPath: '/orders', requestContext: { http: { method: 'POST' } } }, undefined, {
 *   'Retry-After': '3'
 * })
 * // {
 * //   statusCode: 409,
 * //   headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '3' },
 * //   body: '{"type":"about:blank",...}',
 * //   isBase64Encoded: false
 * // }
 * ```
 */
export const problemResponse = (
  problem: ProblemDetails, event: unknown, current: unknown, headers: Record<string, string> = {}
): Record<string, unknown> => {
  const built = isObject(current) ? current : {}
  const response: Record<string, unknown> = {
    ...built,
    statusCode: problem.status,
    headers: { ...withoutBodyHeaders(built.headers), 'Content-Type': PROBLEM_CONTENT_TYPE, ...headers },
    body: JSON.stringify({ type: problem.type, title: problem.title, status: problem.status, detail: problem.detail }),
    isBase64Encoded: false
  }
  const e = isObject(event) ? event : {}
  if (isObject(built.multiValueHeaders) || isObject(e.multiValueHeaders)) {
    const own = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]))
    response.multiValueHeaders = {
      ...withoutBodyHeaders(built.multiValueHeaders), 'Content-Type': [PROBLEM_CONTENT_TYPE], ...own
    }
  }
  const withStatusLine = (isObject(e.requestContext) && 'elb' in e.requestContext) || isLatticeEvent(event)
  if (withStatusLine) response.statusDescription = `${problem.status} ${problem.title}`
  return response
}
