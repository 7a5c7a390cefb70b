/**
 * HTTP events as AWS documents them, one per way of authenticating a caller, for two users
 * (`alice`, `mallory`). Each shape carries who the caller is in the field AWS sets after
 * authenticating the request, and nowhere else:
 * - API Gateway REST API (payload 1.0), "Lambda proxy integration input format":
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html
 * - HTTP API (payload 2.0) with JWT, Lambda and IAM authorizers:
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html
 * - function URL with IAM auth: https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html
 * - ALB target with OIDC authentication: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html
 *   and .../listener-authenticate-users.html
 * - VPC Lattice target group, event structures v1 and v2, with IAM auth:
 *   https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html
 */

export type User = 'alice' | 'mallory'

/** What the client sends: the same for every shape. */
export interface ClientRequest { key: string, body?: string, headers?: Record<string, string> }

const ACCOUNT = '111122223333'
const POOL = 'us-east-1_AbCdEf123'
const IDENTITY_POOL = 'us-east-1:0a1b2c3d-1111-2222-3333-444455556666'

/** Every identity of a user, as each service names it. */
export const identities = {
  alice: {
    sub: '7c1f1e8a-0000-4000-8000-00000000a11c',
    userArn: `arn:aws:iam::${ACCOUNT}:user/alice`,
    userId: 'AIDAALICEEXAMPLE00001',
    roleArn: `arn:aws:sts::${ACCOUNT}:assumed-role/alice-billing/i-0alice-worker`,
    roleId: 'AROAALICEEXAMPLE00001:i-0alice-worker',
    cognitoIdentityId: 'us-east-1:aaaaaaaa-1111-4111-8111-00000000a11c',
    principalId: 'user|alice'
  },
  mallory: {
    sub: '7c1f1e8a-0000-4000-8000-0000000ma11a',
    userArn: `arn:aws:iam::${ACCOUNT}:user/mallory`,
    userId: 'AIDAMALLORYEXAMPLE001',
    roleArn: `arn:aws:sts::${ACCOUNT}:assumed-role/mallory-tools/i-0mallory-box`,
    roleId: 'AROAMALLORYEXAMPLE001:i-0mallory-box',
    cognitoIdentityId: 'us-east-1:bbbbbbbb-2222-4222-8222-0000000ma11a',
    principalId: 'user|mallory'
  }
} satisfies Record<User, Record<string, string>>

let requests = 0
const requestId = (): string => `c6af9ac6-7b61-11e6-9a41-${String(++requests).padStart(12, '0')}`

/** A JWT's text with these claims (unsigned: nothing here verifies it, AWS did). */
export const jwtOf = (claims: Record<string, unknown>): string =>
  `${Buffer.from('{"alg":"ES256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2lnbmF0dXJl`

const clientHeaders = (r: ClientRequest): Record<string, string> => ({
  accept: '*/*',
  'content-type': 'application/json',
  'user-agent': 'curl/8.5.0',
  'x-forwarded-for': '198.51.100.7',
  'x-forwarded-proto': 'https',
  'Idempotency-Key': r.key,
  ...r.headers
})

const lower = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))

/** `requestContext.identity` of a REST API: every field AWS lists, null unless IAM auth set it. */
const restIdentity = (iam: Record<string, string | null> = {}, sourceIp = '198.51.100.7'): Record<string, unknown> => ({
  accessKey: null,
  accountId: null,
  apiKey: null,
  apiKeyId: null,
  caller: null,
  clientCert: null,
  cognitoAuthenticationProvider: null,
  cognitoAuthenticationType: null,
  cognitoIdentityId: null,
  cognitoIdentityPoolId: null,
  principalOrgId: null,
  sourceIp,
  user: null,
  userAgent: 'curl/8.5.0',
  userArn: null,
  ...iam
})

/** A REST API (payload 1.0) proxy event with this authorizer and identity. */
const restEvent = (r: ClientRequest, authorizer: Record<string, unknown> | undefined, identity: Record<string, unknown> = restIdentity()): unknown => {
  const headers = clientHeaders(r)
  return {
    resource: '/orders',
    path: '/orders',
    httpMethod: 'POST',
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {
      accountId: ACCOUNT,
      apiId: '1234567890',
      ...(authorizer === undefined ? {} : { authorizer }),
      domainName: '1234567890.execute-api.us-east-1.amazonaws.com',
      domainPrefix: '1234567890',
      extendedRequestId: `${requestId()}=`,
      httpMethod: 'POST',
      identity,
      path: '/prod/orders',
      protocol: 'HTTP/1.1',
      requestId: requestId(),
      requestTime: '25/Nov/2026:18:00:00 +0000',
      requestTimeEpoch: Date.now(),
      resourceId: 'abc123',
      resourcePath: '/orders',
      stage: 'prod'
    },
    body: r.body ?? '{"amount":5}',
    isBase64Encoded: false
  }
}

/** An HTTP API (payload 2.0) event with this authorizer; `domainName` says API Gateway or a function URL. */
const v2Event = (r: ClientRequest, authorizer: Record<string, unknown> | undefined, domainName = 'r3pmxmplak.execute-api.us-east-1.amazonaws.com'): unknown => ({
  version: '2.0',
  routeKey: domainName.includes('lambda-url') ? '$default' : 'POST /orders',
  rawPath: '/orders',
  rawQueryString: '',
  headers: lower(clientHeaders(r)),
  requestContext: {
    accountId: domainName.includes('lambda-url') ? 'anonymous' : ACCOUNT,
    apiId: domainName.split('.')[0],
    ...(authorizer === undefined ? {} : { authorizer }),
    domainName,
    domainPrefix: domainName.split('.')[0],
    http: { method: 'POST', path: '/orders', protocol: 'HTTP/1.1', sourceIp: '198.51.100.7', userAgent: 'curl/8.5.0' },
    requestId: requestId(),
    routeKey: domainName.includes('lambda-url') ? '$default' : 'POST /orders',
    stage: '$default',
    time: '25/Nov/2026:18:00:00 +0000',
    timeEpoch: Date.now()
  },
  body: r.body ?? '{"amount":5}',
  isBase64Encoded: false
})

/** `authorizer.iam` of an HTTP API or function URL with IAM auth. */
const v2Iam = (arn: string, userId: string, cognitoIdentity: unknown = null): Record<string, unknown> => ({
  iam: { accessKey: 'ASIAEXAMPLEACCESSKEY', accountId: ACCOUNT, callerId: userId, cognitoIdentity, principalOrgId: null, userArn: arn, userId }
})

/** An IAM Identity Center user's session of the permission set's role: the session name is the person. */
const ssoArn = (user: User): string => `arn:aws:sts::${ACCOUNT}:assumed-role/AWSReservedSSO_OrdersOperator_0123456789abcdef/${user}@example.com`

/** Cognito identity pool credentials: every user assumes the pool's one authenticated role. */
const identityPoolArn = `arn:aws:sts::${ACCOUNT}:assumed-role/Cognito_OrdersAuth_Role/CognitoIdentityCredentials`
const identityPoolProvider = (sub: string): string =>
  `cognito-idp.us-east-1.amazonaws.com/${POOL},cognito-idp.us-east-1.amazonaws.com/${POOL}:CognitoSignIn:${sub}`

/** An HTTP event of one shape, sent by `user`, and the caller the default key should name. */
export interface EventShape {
  name: string
  event: (user: User, request: ClientRequest) => unknown
  /** The caller the default names for `user`; undefined where nothing authenticated names one. */
  caller: (user: User) => string | undefined
}

/** Every way an HTTP event names an authenticated caller. */
export const authenticatedShapes: EventShape[] = [
  {
    name: 'REST API, Lambda TOKEN authorizer (principalId and context)',
    event: (u, r) => restEvent(r, { principalId: identities[u].principalId, integrationLatency: 3, plan: 'pro', userId: u }),
    caller: (u) => `lambda:{"plan":"pro","principalId":"${identities[u].principalId}","userId":"${u}"}`
  },
  {
    name: 'REST API, Lambda REQUEST authorizer (principalId and context)',
    event: (u, r) => restEvent(r, { principalId: identities[u].principalId, integrationLatency: 0, stringKey: 'value', numberKey: '1', booleanKey: 'true' }),
    caller: (u) => `lambda:{"booleanKey":"true","numberKey":"1","principalId":"${identities[u].principalId}","stringKey":"value"}`
  },
  {
    // AWS's own REST authorizer examples return one principalId ('user') for everyone; the user is in the context.
    name: 'REST API, Lambda authorizer returning one principalId for everyone, the user in its context',
    event: (u, r) => restEvent(r, { principalId: 'user', integrationLatency: u === 'alice' ? 41 : 0, userId: identities[u].sub }),
    caller: (u) => `lambda:{"principalId":"user","userId":"${identities[u].sub}"}`
  },
  {
    name: 'REST API, Cognito user pool authorizer (claims)',
    event: (u, r) => restEvent(r, {
      claims: { sub: identities[u].sub, 'cognito:username': u, email: `${u}@example.com`, token_use: 'id', aud: '6m2mxmpl4kf0c1', iss: `https://cognito-idp.us-east-1.amazonaws.com/${POOL}`, auth_time: '1764093600', exp: 'Tue Nov 25 19:00:00 UTC 2026', iat: 'Tue Nov 25 18:00:00 UTC 2026' }
    }),
    caller: (u) => `cognito:{"iss":"https://cognito-idp.us-east-1.amazonaws.com/${POOL}","sub":"${identities[u].sub}"}`
  },
  {
    name: 'REST API, IAM auth, an IAM user',
    event: (u, r) => restEvent(r, undefined, restIdentity({ accessKey: 'AKIAEXAMPLEACCESSKEY', accountId: ACCOUNT, caller: identities[u].userId, user: identities[u].userId, userArn: identities[u].userArn })),
    caller: (u) => `iam:${identities[u].userArn}`
  },
  {
    name: 'REST API, IAM auth, an assumed role',
    event: (u, r) => restEvent(r, undefined, restIdentity({ accessKey: 'ASIAEXAMPLEACCESSKEY', accountId: ACCOUNT, caller: identities[u].roleId, user: identities[u].roleId, userArn: identities[u].roleArn })),
    caller: (u) => `iam:${identities[u].roleArn}`
  },
  {
    // IAM Identity Center (and SAML) give every person of a permission set one role; the session names the person.
    name: 'REST API, IAM auth, IAM Identity Center users of one permission set',
    event: (u, r) => restEvent(r, undefined, restIdentity({ accessKey: 'ASIAEXAMPLEACCESSKEY', accountId: ACCOUNT, caller: `AROAORDERSOPERATOR001:${u}@example.com`, user: `AROAORDERSOPERATOR001:${u}@example.com`, userArn: ssoArn(u) })),
    caller: (u) => `iam:${ssoArn(u)}`
  },
  {
    name: 'REST API, IAM auth, Cognito identity pool',
    event: (u, r) => restEvent(r, undefined, restIdentity({
      accessKey: 'ASIAEXAMPLEACCESSKEY',
      accountId: ACCOUNT,
      caller: 'AROACOGNITOPOOLROLE01:CognitoIdentityCredentials',
      user: 'AROACOGNITOPOOLROLE01:CognitoIdentityCredentials',
      userArn: identityPoolArn,
      cognitoIdentityPoolId: IDENTITY_POOL,
      cognitoIdentityId: identities[u].cognitoIdentityId,
      cognitoAuthenticationType: 'authenticated',
      cognitoAuthenticationProvider: identityPoolProvider(identities[u].sub)
    })),
    caller: (u) => `cognito-identity:${identities[u].cognitoIdentityId}`
  },
  {
    name: 'HTTP API, JWT authorizer',
    event: (u, r) => v2Event(r, {
      jwt: { claims: { sub: identities[u].sub, iss: `https://cognito-idp.us-east-1.amazonaws.com/${POOL}`, client_id: '6m2mxmpl4kf0c1', token_use: 'access', scope: 'orders/write', exp: '1764097200', iat: '1764093600' }, scopes: ['orders/write'] },
      // Present, and empty, on JWT-authorized events.
      principalId: '',
      integrationLatency: 0
    }),
    caller: (u) => `jwt:{"iss":"https://cognito-idp.us-east-1.amazonaws.com/${POOL}","sub":"${identities[u].sub}"}`
  },
  {
    name: 'HTTP API, Lambda authorizer (simple response, context naming the user its own way)',
    event: (u, r) => v2Event(r, { lambda: { userId: u, plan: 'pro' } }),
    caller: (u) => `lambda:{"plan":"pro","userId":"${u}"}`
  },
  {
    name: 'HTTP API, Lambda authorizer (context with sub)',
    event: (u, r) => v2Event(r, { lambda: { sub: identities[u].sub, plan: 'pro' } }),
    caller: (u) => `lambda:{"plan":"pro","sub":"${identities[u].sub}"}`
  },
  {
    name: 'HTTP API, IAM auth, an IAM user',
    event: (u, r) => v2Event(r, v2Iam(identities[u].userArn, identities[u].userId)),
    caller: (u) => `iam:${identities[u].userArn}`
  },
  {
    name: 'HTTP API, IAM auth, IAM Identity Center users of one permission set',
    event: (u, r) => v2Event(r, v2Iam(ssoArn(u), `AROAORDERSOPERATOR001:${u}@example.com`)),
    caller: (u) => `iam:${ssoArn(u)}`
  },
  {
    name: 'HTTP API, IAM auth, Cognito identity pool',
    event: (u, r) => v2Event(r, v2Iam(identityPoolArn, 'AROACOGNITOPOOLROLE01:CognitoIdentityCredentials', {
      amr: ['authenticated', `cognito-idp.us-east-1.amazonaws.com/${POOL}`, `cognito-idp.us-east-1.amazonaws.com/${POOL}:CognitoSignIn:${identities[u].sub}`],
      identityId: identities[u].cognitoIdentityId,
      identityPoolId: IDENTITY_POOL
    })),
    caller: (u) => `cognito-identity:${identities[u].cognitoIdentityId}`
  },
  {
    name: 'function URL, IAM auth, an assumed role',
    event: (u, r) => v2Event(r, v2Iam(identities[u].roleArn, identities[u].roleId), 'a1b2c3d4e5f6.lambda-url.us-east-1.on.aws'),
    caller: (u) => `iam:${identities[u].roleArn}`
  },
  {
    name: 'ALB with OIDC authentication',
    event: (u, r) => albOidcEvent(r, u),
    caller: (u) => `alb-oidc:${identities[u].sub}`
  },
  {
    name: 'VPC Lattice (v2), IAM auth, an assumed role',
    event: (u, r) => latticeV2(r, { arn: identities[u].roleArn, session: identities[u].roleId.split(':')[1] as string }),
    caller: (u) => `iam:${identities[u].roleArn}`
  }
]

/** A VPC Lattice v1 event: no requestContext, nothing authenticated in it. */
const latticeV1 = (r: ClientRequest): unknown => ({
  raw_path: '/orders',
  method: 'POST',
  headers: { ...lower(clientHeaders(r)), host: 'orders-0a40eebed65f8d69c.7d67968.vpc-lattice-svcs.us-east-1.on.aws' },
  query_string_parameters: {},
  body: Buffer.from(r.body ?? '{"amount":5}').toString('base64'),
  is_base64_encoded: true
})

/** A VPC Lattice v2 event; `principal`: the one Lattice authenticated with IAM auth (SigV4), none without. */
const latticeV2 = (r: ClientRequest, principal?: { arn: string, session: string }): unknown => ({
  version: '2.0',
  path: '/orders',
  method: 'POST',
  headers: Object.fromEntries(Object.entries(lower(clientHeaders(r))).map(([k, v]) => [k, [v]])),
  body: r.body ?? '{"amount":5}',
  isBase64Encoded: false,
  requestContext: {
    serviceNetworkArn: `arn:aws:vpc-lattice:us-east-1:${ACCOUNT}:servicenetwork/sn-0bf3f2882e9cc805a`,
    serviceArn: `arn:aws:vpc-lattice:us-east-1:${ACCOUNT}:service/svc-0a40eebed65f8d69c`,
    targetGroupArn: `arn:aws:vpc-lattice:us-east-1:${ACCOUNT}:targetgroup/tg-6d0ecf831eec9f09`,
    identity: {
      sourceVpcArn: `arn:aws:ec2:us-east-1:${ACCOUNT}:vpc/vpc-0b8276c84697e7339`,
      ...(principal === undefined ? { type: 'NONE' } : { type: 'AWS_IAM', principal: principal.arn, principalOrgID: 'o-abc123def4', sessionName: principal.session })
    },
    region: 'us-east-1',
    timeEpoch: String(Date.now() * 1000 + requests++)
  }
})

/** The headers ALB adds to a request it authenticated with OIDC (or a Cognito user pool). */
export const oidcHeaders = (user: User): Record<string, string> => ({
  'x-amzn-oidc-accesstoken': jwtOf({ sub: identities[user].sub, scope: 'openid', token_use: 'access' }),
  'x-amzn-oidc-identity': identities[user].sub,
  'x-amzn-oidc-data': jwtOf({ sub: identities[user].sub, email: `${user}@example.com`, exp: 1764097200, iss: `https://cognito-idp.us-east-1.amazonaws.com/${POOL}` })
})

/** An ALB target's event (multi-value headers off), with the OIDC headers the load balancer set for `user` (none when undefined). */
export const albOidcEvent = (r: ClientRequest, user: User | undefined): unknown => ({
  requestContext: { elb: { targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:${ACCOUNT}:targetgroup/orders/6d0ecf831eec9f09` } },
  httpMethod: 'POST',
  path: '/orders',
  queryStringParameters: {},
  headers: { ...lower(clientHeaders(r)), ...(user === undefined ? {} : oidcHeaders(user)) },
  body: r.body ?? '{"amount":5}',
  isBase64Encoded: false
})

/**
 * What a client can add to its own request to pass for `victim`: the headers ALB sets after
 * authenticating (API Gateway and function URLs pass them through as the client sent them), and
 * Lambda's tenant header.
 */
export const spoofHeaders = (victim: User, shape: EventShape): Record<string, string> => ({
  'x-amzn-oidc-identity': shape.caller(victim) ?? identities[victim].sub,
  'x-amzn-oidc-data': jwtOf({ sub: shape.caller(victim) ?? identities[victim].sub, email: `${victim}@example.com` }),
  'x-amzn-oidc-accesstoken': jwtOf({ sub: identities[victim].sub }),
  'X-Amz-Tenant-Id': victim
})

const sourceIps: Record<User, string> = { alice: '198.51.100.7', mallory: '203.0.113.66' }

/** Shapes with no authenticated caller: the key alone names the request. */
export const anonymousShapes: EventShape[] = [
  { name: 'REST API, no auth (each client its own sourceIp)', event: (u, r) => restEvent(r, undefined, restIdentity({}, sourceIps[u])), caller: () => undefined },
  { name: 'REST API, API key only (each client its own key)', event: (u, r) => restEvent(r, undefined, restIdentity({ apiKey: `k3y-${u}`, apiKeyId: `id-${u}` }, sourceIps[u])), caller: () => undefined },
  { name: 'HTTP API, no authorizer', event: (_u, r) => v2Event(r, undefined), caller: () => undefined },
  { name: 'HTTP API, Lambda authorizer, simple response without context', event: (_u, r) => v2Event(r, { lambda: null }), caller: () => undefined },
  {
    name: 'HTTP API, JWT authorizer, a token without sub (client credentials)',
    event: (u, r) => v2Event(r, { jwt: { claims: { client_id: `svc-${u}`, iss: `https://cognito-idp.us-east-1.amazonaws.com/${POOL}`, scope: 'orders/write', token_use: 'access' }, scopes: ['orders/write'] }, principalId: '', integrationLatency: 0 }),
    caller: () => undefined
  },
  { name: 'function URL, auth NONE', event: (_u, r) => v2Event(r, undefined, 'a1b2c3d4e5f6.lambda-url.us-east-1.on.aws'), caller: () => undefined },
  { name: 'ALB without authentication', event: (_u, r) => albOidcEvent(r, undefined), caller: () => undefined },
  { name: 'VPC Lattice (v1), which names no caller', event: (_u, r) => latticeV1(r), caller: () => undefined },
  { name: 'VPC Lattice (v2), auth NONE', event: (_u, r) => latticeV2(r), caller: () => undefined }
]
