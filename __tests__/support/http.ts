import type { ALBEvent, APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda'

/** What varies between two deliveries of one HTTP request: never the method, path, key or body. */
export interface HttpRequest {
  method?: string
  path?: string
  /** The Idempotency-Key header, sent under `headerName` (any case); none when undefined. */
  key?: string
  headerName?: string
  body?: string
  /** Query string parameters. */
  query?: Record<string, string>
  /** The authenticated caller, as the shape's authorizer reports it (ALB has none). */
  caller?: string
}

const queryString = (r: HttpRequest): string => new URLSearchParams(r.query ?? {}).toString()

let requests = 0
const requestId = (): string => `req-${++requests}-${Math.random().toString(36).slice(2, 8)}`

const headersOf = (r: HttpRequest): Record<string, string> => ({
  'content-type': 'application/json',
  'x-amzn-trace-id': `Root=${requestId()}`,
  ...(r.key === undefined ? {} : { [r.headerName ?? 'Idempotency-Key']: r.key })
})

/** API Gateway REST API (payload 1.0): `httpMethod`, `path`, `headers` and `multiValueHeaders`, the client's case kept. */
export const restApiEvent = (r: HttpRequest): APIGatewayProxyEvent => {
  const headers = headersOf(r)
  return {
    httpMethod: r.method ?? 'POST',
    path: r.path ?? '/orders',
    resource: r.path ?? '/orders',
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: r.query ?? null,
    multiValueQueryStringParameters: r.query === undefined ? null : Object.fromEntries(Object.entries(r.query).map(([k, v]) => [k, [v]])),
    pathParameters: null,
    stageVariables: null,
    body: r.body ?? '{"amount":5}',
    isBase64Encoded: false,
    requestContext: {
      requestId: requestId(), requestTimeEpoch: Date.now(), stage: 'prod', httpMethod: r.method ?? 'POST',
      ...(r.caller === undefined ? {} : { authorizer: { principalId: r.caller } })
    } as unknown as APIGatewayProxyEvent['requestContext']
  }
}

/** API Gateway HTTP API (payload 2.0): `rawPath`, `requestContext.http.method`, header names lower-cased. */
export const httpApiEvent = (r: HttpRequest): APIGatewayProxyEventV2 => ({
  version: '2.0',
  routeKey: `${r.method ?? 'POST'} ${r.path ?? '/orders'}`,
  rawPath: r.path ?? '/orders',
  rawQueryString: queryString(r),
  ...(r.query === undefined ? {} : { queryStringParameters: r.query }),
  headers: Object.fromEntries(Object.entries(headersOf(r)).map(([k, v]) => [k.toLowerCase(), v])),
  body: r.body ?? '{"amount":5}',
  isBase64Encoded: false,
  requestContext: {
    requestId: requestId(),
    timeEpoch: Date.now(),
    http: { method: r.method ?? 'POST', path: r.path ?? '/orders', protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'test' },
    ...(r.caller === undefined ? {} : { authorizer: { jwt: { claims: { sub: r.caller }, scopes: [] } } })
  } as unknown as APIGatewayProxyEventV2['requestContext']
})

/** A Lambda function URL: the 2.0 shape, with `domainName` a lambda-url one. */
export const functionUrlEvent = (r: HttpRequest): APIGatewayProxyEventV2 => {
  const event = httpApiEvent(r)
  return { ...event, routeKey: '$default', requestContext: { ...event.requestContext, domainName: 'abc.lambda-url.us-east-1.on.aws' } }
}

/** An ALB target group with multi-value headers on: only `multiValueHeaders`, `requestContext.elb`. */
export const albEvent = (r: HttpRequest): ALBEvent => ({
  httpMethod: r.method ?? 'POST',
  path: r.path ?? '/orders',
  multiValueHeaders: Object.fromEntries(Object.entries(headersOf(r)).map(([k, v]) => [k.toLowerCase(), [v]])),
  ...(r.query === undefined ? {} : { multiValueQueryStringParameters: Object.fromEntries(Object.entries(r.query).map(([k, v]) => [k, [encodeURIComponent(v)]])) }),
  body: r.body ?? '{"amount":5}',
  isBase64Encoded: false,
  requestContext: { elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/orders/abc' } }
})

/** Every HTTP event shape, by name. */
export const httpEventShapes: Array<[string, (r: HttpRequest) => unknown]> = [
  ['API Gateway REST API (v1)', restApiEvent],
  ['API Gateway HTTP API (v2)', httpApiEvent],
  ['function URL', functionUrlEvent],
  ['ALB with multi-value headers', albEvent]
]
