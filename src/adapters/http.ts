import { IdempotencyKeyError } from '../errors.js'
import { canonicalJson, isEmptySelection } from '../lifecycle/key.js'

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
 * What identifies an HTTP request: its method, path and query (the request target), the
 * authenticated caller when an authorizer names one, and the client's key. Two clients, or one
 * client on two query strings, never share a stored response.
 */
export interface HttpRequestKey { method: string, path: string, query?: Array<[string, string]>, caller?: string, idempotencyKey: string }

/** The methods the draft's header is for: without the key they are refused. Others run unprotected. */
const KEYED_METHODS = new Set(['POST', 'PATCH'])

type Headers = Record<string, unknown> | null | undefined

interface HttpEventShape {
  httpMethod?: unknown
  path?: unknown
  rawPath?: unknown
  rawQueryString?: unknown
  queryStringParameters?: Record<string, unknown> | null
  multiValueQueryStringParameters?: Record<string, unknown> | null
  headers?: Headers
  multiValueHeaders?: Record<string, unknown> | null
  requestContext?: { http?: { method?: unknown }, elb?: unknown, authorizer?: Authorizer | null, identity?: { userArn?: unknown, cognitoIdentityId?: unknown } | null } | null
}

interface Authorizer {
  principalId?: unknown
  claims?: { sub?: unknown }
  jwt?: { claims?: { sub?: unknown } }
  iam?: { userArn?: unknown, cognitoIdentity?: { identityId?: unknown } }
  lambda?: { principalId?: unknown, sub?: unknown } | null
}

/**
 * Method and path of an HTTP event, or undefined for any other event. Recognised shapes
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway.html and .../services-alb.html):
 * - API Gateway REST (v1) and ALB: `httpMethod` and `path` (ALB has `requestContext.elb`);
 * - API Gateway HTTP API (v2) and function URLs: `requestContext.http.method` and `rawPath`.
 *
 * @example
 * ```ts
 * httpRequestOf({ rawPath: '/orders', requestContext: { http: { method: 'POST' } } }) // { method: 'POST', path: '/orders' }
 * ```
 */
export const httpRequestOf = (event: unknown): { method: string, path: string } | undefined => {
  if (typeof event !== 'object' || event === null) return undefined
  const e = event as HttpEventShape
  if (typeof e.requestContext !== 'object' || e.requestContext === null) return undefined
  if (typeof e.httpMethod === 'string' && typeof e.path === 'string') return { method: e.httpMethod.toUpperCase(), path: e.path }
  const method = e.requestContext.http?.method
  if (typeof method === 'string' && typeof e.rawPath === 'string') return { method: method.toUpperCase(), path: e.rawPath }
  return undefined
}

/**
 * True for an API Gateway (v1, v2), ALB or function URL event.
 *
 * @example
 * ```ts
 * isHttpEvent({ httpMethod: 'POST', path: '/orders', requestContext: { elb: {} } }) // true
 * ```
 */
export const isHttpEvent = (event: unknown): boolean => httpRequestOf(event) !== undefined

/** A header's values whatever the case of its name: `headers` first, then `multiValueHeaders`. */
const headerValues = (event: HttpEventShape, name: string): unknown[] => {
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
    throw new IdempotencyKeyError(`the ${IDEMPOTENCY_KEY_HEADER} header is missing from ${request.method} ${request.path}: an HTTP request is identified by it (or set the key option)`,
      undefined, { detail: `This request needs an ${IDEMPOTENCY_KEY_HEADER} header: a unique value for each operation, sent again unchanged when the request is retried.` })
  }
  const query = queryOf(event as HttpEventShape)
  const caller = nameCaller(event, context)
  if (caller !== undefined && typeof caller !== 'string') {
    throw new IdempotencyKeyError(`the caller option returned ${typeof caller}, not a string or undefined`, undefined, { clientError: false })
  }
  const key: HttpRequestKey = { ...request, ...(query.length === 0 ? {} : { query }), ...(caller === undefined || caller === '' ? {} : { caller }), idempotencyKey }
  return key
}

/** Who sent a request: the `caller` option, or what the authorizers say. */
export type CallerOf = (event: unknown, context: unknown) => string | undefined

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
    const source = event.multiValueQueryStringParameters ?? event.queryStringParameters ?? {}
    for (const [name, values] of Object.entries(source)) {
      for (const value of Array.isArray(values) ? values : [values]) pairs.push([name, String(value)])
    }
  }
  return pairs.sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)
}

/**
 * The authenticated caller: only what AWS sets after authenticating the request, never what the
 * client sends (OWASP API1). On API Gateway (REST and HTTP APIs) and function URLs, headers are
 * the client's, `x-amzn-oidc-*` included, so the caller is read from `requestContext` only: an
 * authorizer's principal, a token's `sub`, a Cognito identity (identity-pool users all share one
 * role ARN), then an IAM ARN, and last the whole context of a Lambda authorizer that names its
 * user another way. An assumed role is its role, not its session: the session name changes with
 * the worker (an ECS task, an EC2 instance) and with every credential refresh, and a retry from
 * another worker of the same service must still meet the first request. On an ALB, the caller is
 * the `x-amzn-oidc-identity` header the load balancer sets when it authenticated the request.
 */
const callerOf: CallerOf = (event) => {
  const e = event as HttpEventShape
  if (typeof e.requestContext?.elb === 'object' && e.requestContext.elb !== null) return albCallerOf(e)
  const context = e.requestContext
  const a = context?.authorizer
  const identity = [a?.principalId, a?.claims?.sub, a?.jwt?.claims?.sub, a?.lambda?.principalId, a?.lambda?.sub, a?.iam?.cognitoIdentity?.identityId, context?.identity?.cognitoIdentityId]
    .find(isNonEmptyString)
  if (identity !== undefined) return identity
  const arn = [a?.iam?.userArn, context?.identity?.userArn].find(isNonEmptyString)
  if (arn !== undefined) return arn.replace(/^(arn:[^:]+:sts::\d+:assumed-role\/[^/]+)\/.*$/, '$1')
  return lambdaContextCaller(a?.lambda)
}

/**
 * An HTTP API Lambda authorizer's context is all it says of the caller, and API Gateway sets it
 * from the authorizer's answer: when it holds no `principalId` or `sub`, the whole of it is the
 * caller, so that two users it tells apart never share a record. (Prefixed: it is no user's name.)
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-lambda-authorizer.html
 */
const lambdaContextCaller = (lambda: unknown): string | undefined =>
  typeof lambda === 'object' && lambda !== null && !isEmptySelection(lambda) ? `lambda-authorizer:${canonicalJson(lambda)}` : undefined

/**
 * ALB with OIDC (or Cognito) authentication names the user's `sub` in `x-amzn-oidc-identity`,
 * which the load balancer sets itself:
 * https://docs.aws.amazon.com/elasticloadbalancing/latest/application/listener-authenticate-users.html
 * A request that carries two different values names no one: it is refused rather than read.
 */
const albCallerOf = (event: HttpEventShape): string | undefined => {
  const values = [...new Set(headerValues(event, 'x-amzn-oidc-identity').filter(isNonEmptyString))]
  if (values.length > 1) {
    throw new IdempotencyKeyError('the x-amzn-oidc-identity header names more than one caller: the request cannot be scoped to its caller',
      undefined, { detail: 'This request names more than one authenticated user.' })
  }
  return values[0]
}

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== ''

/**
 * The default payload of a whole event: the event itself, except for HTTP events (anything
 * with a `requestContext`: API Gateway, ALB, function URLs), whose `requestContext` (request
 * id, time) and headers change on every retry — hashing them would refuse every retry as a
 * mismatch — so their `body` is compared instead.
 *
 * @example
 * ```ts
 * defaultEventPayload({ body: '{"amount":5}', requestContext: { requestId: 'r-1' } }) // '{"amount":5}'
 * ```
 */
export const defaultEventPayload = (event: unknown): unknown =>
  typeof event === 'object' && event !== null && 'requestContext' in event ? (event as { body?: unknown }).body : event
