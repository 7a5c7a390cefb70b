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
  /** The authenticated caller, as the shape's authorizer reports it (ALB and Lattice v1 have none). */
  caller?: string
  /** The body as a binary media type arrives: base64, with the shape's flag saying so. */
  base64?: boolean
}

/** The body and its base64 flag as the shape carries them. */
const bodyOf = (r: HttpRequest): { body: string, isBase64Encoded: boolean } => {
  const body = r.body ?? '{"amount":5}'
  return r.base64 === true ? { body: Buffer.from(body).toString('base64'), isBase64Encoded: true } : { body, isBase64Encoded: false }
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
    ...bodyOf(r),
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
  ...bodyOf(r),
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
  ...bodyOf(r),
  requestContext: { elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/orders/abc' } }
})

/**
 * A VPC Lattice target group's event, structure v1: snake_case names, header values joined in
 * one string, no `requestContext` (so no caller and no time of its own).
 * https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html
 */
export const latticeV1Event = (r: HttpRequest): unknown => {
  const { body, isBase64Encoded } = bodyOf(r)
  return {
    raw_path: r.path ?? '/orders',
    method: r.method ?? 'POST',
    headers: { ...Object.fromEntries(Object.entries(headersOf(r)).map(([k, v]) => [k.toLowerCase(), v])), 'x-forwarded-for': '10.0.1.7' },
    query_string_parameters: r.query ?? {},
    body,
    is_base64_encoded: isBase64Encoded
  }
}

/**
 * A VPC Lattice target group's event, structure v2: every header value an array, the service and
 * target group in `requestContext`, the time in microseconds, and with IAM auth the principal
 * Lattice authenticated in `requestContext.identity`.
 */
export const latticeV2Event = (r: HttpRequest): unknown => ({
  version: '2.0',
  path: r.path ?? '/orders',
  method: r.method ?? 'POST',
  headers: Object.fromEntries(Object.entries(headersOf(r)).map(([k, v]) => [k.toLowerCase(), [v]])),
  ...(r.query === undefined ? {} : { queryStringParameters: r.query }),
  ...bodyOf(r),
  requestContext: {
    serviceNetworkArn: 'arn:aws:vpc-lattice:us-east-1:123456789012:servicenetwork/sn-0bf3f2882e9cc805a',
    serviceArn: 'arn:aws:vpc-lattice:us-east-1:123456789012:service/svc-0a40eebed65f8d69c',
    targetGroupArn: 'arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-6d0ecf831eec9f09',
    identity: {
      sourceVpcArn: 'arn:aws:ec2:us-east-1:123456789012:vpc/vpc-0b8276c84697e7339',
      ...(r.caller === undefined
        ? { type: 'NONE' }
        : { type: 'AWS_IAM', principal: `arn:aws:sts::123456789012:assumed-role/orders-client/${r.caller}`, sessionName: r.caller })
    },
    region: 'us-east-1',
    timeEpoch: String(Date.now() * 1000 + ++requests)
  }
})

/** Every HTTP event shape, by name. */
export const httpEventShapes: Array<[string, (r: HttpRequest) => unknown]> = [
  ['API Gateway REST API (v1)', restApiEvent],
  ['API Gateway HTTP API (v2)', httpApiEvent],
  ['function URL', functionUrlEvent],
  ['ALB with multi-value headers', albEvent],
  ['VPC Lattice (v1)', latticeV1Event],
  ['VPC Lattice (v2)', latticeV2Event]
]
