import { IdempotencyInProgressError, IdempotencyKeyError, IdempotencyPayloadMismatchError } from '../errors.js'
import type { ProblemDetails } from '../types.js'

/**
 * How an HTTP request the middleware refuses is answered (docs/architecture.md: whole events and
 * HTTP): as RFC 9457 problem details, which the IETF `Idempotency-Key` header draft recommends
 * for its three refusals (https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/).
 */

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/**
 * The client's words of a refusal an HTTP request gets (a 400 key error, a 409, a 422), or
 * undefined for any other error, which the stack answers as it answers any error.
 *
 * @example
 * ```ts
 * problemOf(new IdempotencyPayloadMismatchError('k')) // { type: 'about:blank', title: 'Unprocessable Content', status: 422, detail: '...' }
 * ```
 */
export const problemOf = (error: unknown): ProblemDetails | undefined =>
  error instanceof IdempotencyInProgressError || error instanceof IdempotencyPayloadMismatchError || error instanceof IdempotencyKeyError
    ? error.problem
    : undefined

type Headers = Record<string, unknown>

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Headers without the ones that described the body being replaced. */
const withoutBodyHeaders = (headers: unknown): Headers =>
  Object.fromEntries(Object.entries(isObject(headers) ? headers : {}).filter(([name]) => !/^content-(type|length)$/i.test(name)))

/**
 * The response to a refused HTTP request. A response already built by a middleware inside ours
 * (`@middy/http-error-handler` turns the error into a `text/plain` message; `@middy/http-cors`
 * adds its headers) keeps its other headers; its status and body are replaced. An event with
 * `multiValueHeaders` (API Gateway REST, ALB with multi-value headers on, where ALB reads only
 * those) gets them in the response too; an ALB event gets the status line ALB sends.
 *
 * @example
 * ```ts
 * problemResponse(problem, { rawPath: '/orders', requestContext: { http: { method: 'POST' } } }, undefined)
 * // { statusCode: 409, headers: { 'Content-Type': 'application/problem+json' }, body: '{"type":"about:blank",...}', isBase64Encoded: false }
 * ```
 */
export const problemResponse = (problem: ProblemDetails, event: unknown, current: unknown): Record<string, unknown> => {
  const built = isObject(current) ? current : {}
  const response: Record<string, unknown> = {
    ...built,
    statusCode: problem.status,
    headers: { ...withoutBodyHeaders(built.headers), 'Content-Type': PROBLEM_CONTENT_TYPE },
    body: JSON.stringify({ type: problem.type, title: problem.title, status: problem.status, detail: problem.detail }),
    isBase64Encoded: false
  }
  const e = isObject(event) ? event : {}
  if (isObject(built.multiValueHeaders) || isObject(e.multiValueHeaders)) {
    response.multiValueHeaders = { ...withoutBodyHeaders(built.multiValueHeaders), 'Content-Type': [PROBLEM_CONTENT_TYPE] }
  }
  if (isObject(e.requestContext) && 'elb' in e.requestContext) response.statusDescription = `${problem.status} ${problem.title}`
  return response
}
