import { IdempotencyKeyError } from '../errors.js'
import { canonicalJson, isEmptySelection } from '../keys/selector.js'
import { headerValues, type HeadersOf } from './headers.js'
import { isLatticeV1, isLatticeV2, latticePrincipalOf } from './lattice.js'

/** Who sent a request: the `caller` option, or what the authorizers say. */
export type CallerOf = (event: unknown, context: unknown) => string | undefined

interface CallerShape extends HeadersOf {
  requestContext?: {
    elb?: unknown
    authorizer?: Authorizer | null
    identity?: { userArn?: unknown, cognitoIdentityId?: unknown } | null
  } | null
}

interface Authorizer {
  principalId?: unknown
  claims?: Claims | null
  jwt?: { claims?: Claims | null }
  iam?: { userArn?: unknown, cognitoIdentity?: { identityId?: unknown } | null }
  lambda?: Record<string, unknown> | null
}

interface Claims { sub?: unknown, iss?: unknown }

/**
 * The authenticated caller of an HTTP request, for its default key: only what AWS sets after
 * authenticating the request, never what the client sends (OWASP API1). On API Gateway (REST and
 * HTTP APIs) and function URLs, headers are the client's, `x-amzn-oidc-*` included, so the caller
 * is read from `requestContext` only. On an ALB, it is the `x-amzn-oidc-identity` header the load
 * balancer sets when it authenticated the request. On VPC Lattice, it is the principal Lattice
 * authenticated with IAM auth (v2's `requestContext.identity.principal`; v1 events name none). Each
 * caller is written `kind:value`, the kind naming who vouched for it, so that one authenticator's
 * user can never read as another's (a JWT `sub` equal to an IAM ARN, or to a Lambda authorizer's
 * principal, is someone else).
 *
 * @example
 * ```ts
 * callerOf({
 *   requestContext: { authorizer: { jwt: { claims: { iss: 'https://idp.example.com', sub: '42' } } } }
 * }, undefined)
 * // 'jwt:{"iss":"https://idp.example.com","sub":"42"}'
 * ```
 */
export const callerOf: CallerOf = (event) => {
  if (isLatticeV1(event)) return undefined
  if (isLatticeV2(event)) {
    // SigV4 verified by Lattice, as API Gateway does for its IAM auth: the same kind of caller.
    const principal = latticePrincipalOf(event)
    return principal === undefined ? undefined : `iam:${principal}`
  }
  const e = event as CallerShape
  if (typeof e.requestContext?.elb === 'object' && e.requestContext.elb !== null) return albCallerOf(e)
  const context = e.requestContext
  const a = context?.authorizer
  const user = [['jwt', a?.jwt?.claims], ['cognito', a?.claims]] as const
  for (const [kind, claims] of user) {
    if (isNonEmptyString(claims?.sub)) {
      return `${kind}:${canonicalJson({ iss: isNonEmptyString(claims.iss) ? claims.iss : undefined, sub: claims.sub })}`
    }
  }
  if (isNonEmptyString(a?.principalId)) return `lambda:${canonicalJson(restAuthorizerAnswer(a))}`
  if (typeof a?.lambda === 'object' && a.lambda !== null && !isEmptySelection(a.lambda)) {
    return `lambda:${canonicalJson(a.lambda)}`
  }
  const identityId = [a?.iam?.cognitoIdentity?.identityId, context?.identity?.cognitoIdentityId].find(isNonEmptyString)
  if (identityId !== undefined) return `cognito-identity:${identityId}`
  const arn = [a?.iam?.userArn, context?.identity?.userArn].find(isNonEmptyString)
  return arn === undefined ? undefined : `iam:${arn}`
}

/**
 * What API Gateway adds to a REST API Lambda authorizer's answer on each request, per its list
 * of `$context.authorizer` variables: it measures the call (0 when the answer was cached), so a
 * retry would never meet the first request if it counted.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-variables-for-access-logging.html
 */
const PER_REQUEST = new Set(['integrationLatency', 'integrationStatus', 'latency', 'requestId', 'status', 'error'])

/**
 * A REST API Lambda authorizer's answer: its `principalId` and the `context` API Gateway
 * flattened next to it. Both, not the principal alone: AWS's own examples return one constant
 * principal (`'user'`) for everyone and name the user in the context, and two users such an
 * authorizer tells apart must never share a record.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html
 */
const restAuthorizerAnswer = (authorizer: Authorizer): Record<string, unknown> =>
  Object.fromEntries(Object.entries(authorizer).filter(([name]) => !PER_REQUEST.has(name)))

/**
 * ALB with OIDC (or Cognito) authentication names the user's `sub` in `x-amzn-oidc-identity`,
 * which the load balancer sets itself:
 * https://docs.aws.amazon.com/elasticloadbalancing/latest/application/listener-authenticate-users.html
 * A request that carries two different values names no one: it is refused rather than read.
 */
const albCallerOf = (event: CallerShape): string | undefined => {
  const values = [...new Set(headerValues(event, 'x-amzn-oidc-identity').filter(isNonEmptyString))]
  if (values.length > 1) {
    throw new IdempotencyKeyError(
      'the x-amzn-oidc-identity header names more than one caller: the request cannot be scoped to its caller',
      undefined,
      { detail: 'This request names more than one authenticated user.' }
    )
  }
  return values[0] === undefined ? undefined : `alb-oidc:${values[0]}`
}

export const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== ''
