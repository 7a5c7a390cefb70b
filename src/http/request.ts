import { IdempotencyKeyError } from '../errors.js'
import { callerOf, isNonEmptyString, type CallerOf } from './caller.js'
import { headerValues } from './headers.js'
import { requestBodyOf } from './body.js'
import { isLatticeV1, isLatticeV2 } from './lattice.js'

export type { CallerOf }

/**
 * HTTP events and their defaults in whole-event mode (docs/architecture.md: whole events and HTTP). The request is
 * identified the way the IETF httpapi `Idempotency-Key` header draft and Stripe's API teach
 * clients to: by the `Idempotency-Key` header, scoped by method and path, so the same key sent
 * to two endpoints names two pieces of work.
 * https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 */

/** The name of the header, matched whatever its case. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key'

/**
 * What identifies an HTTP request: the API and stage that received it (API Gateway and function
 * URLs), or the VPC Lattice service (`service`, v2 events), its method, path and query (the
 * request target), the authenticated caller when an authorizer names one, and the client's key.
 * Two clients, one client on two query strings, or the test and prod stages of one function
 * sharing a table never share a stored response.
 */
export interface HttpRequestKey {
  apiId?: string
  stage?: string
  service?: string
  method: string
  path: string
  query?: Array<[string, string]>
  caller?: string
  idempotencyKey: string
}

/** The methods the draft's header is for: without the key they are refused. Others run unprotected. */
const KEYED_METHODS = new Set(['POST', 'PATCH'])

interface HttpEventShape {
  httpMethod?: unknown
  path?: unknown
  rawPath?: unknown
  rawQueryString?: unknown
  queryStringParameters?: Record<string, unknown> | null
  multiValueQueryStringParameters?: Record<string, unknown> | null
  /** VPC Lattice v1's query. */
  query_string_parameters?: Record<string, unknown> | null
  headers?: Record<string, unknown> | null
  multiValueHeaders?: Record<string, unknown> | null
  requestContext?: { apiId?: unknown, stage?: unknown, serviceArn?: unknown, http?: { method?: unknown } } | null
}

/**
 * Method and path of an HTTP event, or undefined for any other event. Recognised shapes
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway.html, .../services-alb.html
 * and https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html):
 * - API Gateway REST (v1) and ALB: `httpMethod` and `path` (ALB has `requestContext.elb`);
 * - API Gateway HTTP API (v2) and function URLs: `requestContext.http.method` and `rawPath`;
 * - VPC Lattice v1: `method` and `raw_path`, without a `requestContext`;
 * - VPC Lattice v2: `version` 2.0, `method` and `path`, the service in `requestContext`.
 *
 * @example
 * ```ts
 * httpRequestOf({ rawPath: '/orders', requestContext: { http: { method: 'POST' } } })
 * // { method: 'POST', path: '/orders' }
 * ```
 */
export const httpRequestOf = (event: unknown): { method: string, path: string } | undefined => {
  if (typeof event !== 'object' || event === null) return undefined
  if (isLatticeV1(event)) return { method: event.method.toUpperCase(), path: event.raw_path }
  if (isLatticeV2(event)) return { method: event.method.toUpperCase(), path: event.path }
  const e = event as HttpEventShape
  if (typeof e.requestContext !== 'object' || e.requestContext === null) return undefined
  if (typeof e.httpMethod === 'string' && typeof e.path === 'string') {
    return { method: e.httpMethod.toUpperCase(), path: e.path }
  }
  const method = e.requestContext.http?.method
  if (typeof method === 'string' && typeof e.rawPath === 'string') {
    return { method: method.toUpperCase(), path: e.rawPath }
  }
  return undefined
}

/**
 * True for an API Gateway (v1, v2), ALB, function URL or VPC Lattice (v1, v2) event.
 *
 * @example
 * ```ts
 * isHttpEvent({ httpMethod: 'POST', path: '/orders', requestContext: { elb: {} } }) // true
 * ```
 */
export const isHttpEvent = (event: unknown): boolean => httpRequestOf(event) !== undefined

/**
 * The client's `Idempotency-Key`, or undefined when it sent none (or an empty one). When a
 * header comes several times, API Gateway v1 puts the last value in `headers`; the same rule
 * (first non-empty from `headers`, else the last from `multiValueHeaders`) is applied to every
 * shape. The draft makes the value a structured-field string, which may arrive quoted: the
 * quotes are not part of the key.
 *
 * @example
 * ```ts
 * idempotencyKeyOf({ headers: { 'idempotency-key': '"8e03978e"' } }) // '8e03978e'
 * ```
 */
export const idempotencyKeyOf = (event: unknown): string | undefined => {
  const e = (event ?? {}) as HttpEventShape
  const single = headerValues({ headers: e.headers }, IDEMPOTENCY_KEY_HEADER).filter(isKey)
  const multi = headerValues({ multiValueHeaders: e.multiValueHeaders }, IDEMPOTENCY_KEY_HEADER).filter(isKey)
  const raw = (single[0] ?? multi[multi.length - 1]) as string | undefined
  if (raw === undefined) return undefined
  const unquoted = /^"([^"\\]*)"$/.exec(raw.trim())?.[1] ?? raw.trim()
  return unquoted === '' ? undefined : unquoted
}

const isKey = (value: unknown): value is string => typeof value === 'string' && value.trim() !== ''

/**
 * The default key of a whole event: for an HTTP event, its `Idempotency-Key` header with its
 * method, path, query and caller; for any other event, the event itself (hashed). A POST or
 * PATCH without the header is refused with `IdempotencyKeyError` (400): hashing the whole
 * request instead would never match a retry, whose `requestContext` is new.
 *
 * @example
 * ```ts
 * defaultEventKey({ httpMethod: 'POST', path: '/orders', headers: { 'Idempotency-Key': 'k-1' }, requestContext: {} })
 * // { method: 'POST', path: '/orders', idempotencyKey: 'k-1' }
 * ```
 */
export const defaultEventKey = (event: unknown, context?: unknown, nameCaller: CallerOf = callerOf): unknown => {
  const request = httpRequestOf(event)
  if (request === undefined) return event
  const idempotencyKey = idempotencyKeyOf(event)
  if (idempotencyKey === undefined) {
    throw new IdempotencyKeyError(
      `the ${IDEMPOTENCY_KEY_HEADER} header is missing from ${request.method} ${request.path}: ` +
      'an HTTP request is identified by it (or set the key option)',
      undefined,
      {
        detail: `This request needs an ${IDEMPOTENCY_KEY_HEADER} header: a unique value for each operation, ` +
          'sent again unchanged when the request is retried.'
      }
    )
  }
  const query = queryOf(event as HttpEventShape)
  const caller = nameCaller(event, context)
  if (caller !== undefined && typeof caller !== 'string') {
    throw new IdempotencyKeyError(`the caller option returned ${typeof caller}, not a string or undefined`, undefined,
      { clientError: false })
  }
  const key: HttpRequestKey = {
    ...scopeOf(event as HttpEventShape),
    ...request,
    ...(query.length === 0 ? {} : { query }),
    ...(caller === undefined || caller === '' ? {} : { caller }),
    idempotencyKey
  }
  return key
}

/**
 * The API and stage that received the request, when API Gateway (or a function URL) names them:
 * `event.path` and `rawPath` leave the stage out, so without them the test and prod stages of one
 * function behind one table would share every record. A VPC Lattice v2 event names its service
 * (`requestContext.serviceArn`) instead. An ALB and a Lattice v1 event name none.
 */
const scopeOf = (event: HttpEventShape): Pick<HttpRequestKey, 'apiId' | 'stage' | 'service'> => {
  const context = event.requestContext ?? {}
  if (isLatticeV2(event)) return isNonEmptyString(context.serviceArn) ? { service: context.serviceArn } : {}
  const { apiId, stage } = context
  return { ...(isNonEmptyString(apiId) ? { apiId } : {}), ...(isNonEmptyString(stage) ? { stage } : {}) }
}

/**
 * True for an HTTP request the default key does not protect: a method other than POST and
 * PATCH (GET, HEAD, OPTIONS, PUT, DELETE are idempotent by HTTP's own rules) sent without the
 * header. It runs as if the middleware were not there, so preflights and health checks pass.
 *
 * @example
 * ```ts
 * runsUnprotected({ httpMethod: 'GET', path: '/health', headers: {}, requestContext: {} }) // true
 * ```
 */
export const runsUnprotected = (event: unknown): boolean => {
  const request = httpRequestOf(event)
  return request !== undefined && !KEYED_METHODS.has(request.method) && idempotencyKeyOf(event) === undefined
}

/** The query as sorted name-value pairs, whichever shape carries it, so parameter order does not matter. */
const queryOf = (event: HttpEventShape): Array<[string, string]> => {
  const pairs: Array<[string, string]> = []
  if (typeof event.rawQueryString === 'string') {
    for (const [name, value] of new URLSearchParams(event.rawQueryString)) pairs.push([name, value])
  } else {
    const source = event.multiValueQueryStringParameters ?? event.queryStringParameters ??
      event.query_string_parameters ?? {}
    for (const [name, values] of Object.entries(source)) {
      for (const value of Array.isArray(values) ? values : [values]) pairs.push([name, String(value)])
    }
  }
  return pairs.sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)
}

/**
 * The default payload of a whole event: the event itself, except for HTTP events (API Gateway,
 * ALB, function URLs, VPC Lattice, and anything else with a `requestContext`), whose
 * `requestContext` (request id, time) and headers change on every retry — hashing them would
 * refuse every retry as a mismatch — so their body is compared instead: the bytes the client
 * sent, a base64-encoded body decoded first (see `requestBodyOf`).
 *
 * @example
 * ```ts
 * defaultEventPayload({ body: '{"amount":5}', requestContext: { requestId: 'r-1' } }) // '{"amount":5}'
 * ```
 */
export const defaultEventPayload = (event: unknown): unknown => {
  if (isHttpEvent(event)) return requestBodyOf(event)
  return typeof event === 'object' && event !== null && 'requestContext' in event
    ? (event as { body?: unknown }).body
    : event
}
