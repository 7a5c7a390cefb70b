/**
 * Amazon VPC Lattice events, as a target group hands them to a Lambda function, in its two event
 * structures (https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html):
 * - v1: `{ raw_path, method, headers, query_string_parameters, body, is_base64_encoded }`, with
 *   no `requestContext` at all;
 * - v2: `{ version: '2.0', path, method, headers, queryStringParameters, body, isBase64Encoded,
 *   requestContext: { serviceNetworkArn, serviceArn, targetGroupArn, identity, region, timeEpoch } }`,
 *   each header value an array.
 */

/** The fields of a Lattice v1 event that this package reads. */
export interface LatticeV1Shape {
  raw_path?: unknown
  method?: unknown
  query_string_parameters?: Record<string, unknown> | null
  is_base64_encoded?: unknown
}

/** The fields of a Lattice v2 event that this package reads. */
export interface LatticeV2Shape {
  version?: unknown
  path?: unknown
  method?: unknown
  requestContext?: { serviceArn?: unknown, targetGroupArn?: unknown, identity?: { principal?: unknown } | null } | null
}

/**
 * True for a Lattice v1 event: its snake_case `raw_path` and a `method`. Nothing else AWS sends
 * a function is named so.
 *
 * @example
 * ```ts
 * isLatticeV1({ raw_path: '/orders', method: 'POST', headers: {}, body: '', is_base64_encoded: false }) // true
 * ```
 */
export const isLatticeV1 = (event: unknown): event is LatticeV1Shape & { raw_path: string, method: string } => {
  const e = event as LatticeV1Shape | null | undefined
  return typeof e?.raw_path === 'string' && typeof e.method === 'string'
}

/**
 * True for a Lattice v2 event: `version` 2.0 with a top-level `method` and `path` (an HTTP API's
 * 2.0 events have neither), and the target group that received it in `requestContext` (every v2
 * event names one: a Lambda function is a target of a target group).
 *
 * @example
 * ```ts
 * isLatticeV2({
 *   version: '2.0', path: '/orders', method: 'POST', requestContext: { targetGroupArn: 'arn:aws:vpc-lattice:…' }
 * }) // true
 * ```
 */
export const isLatticeV2 = (event: unknown): event is LatticeV2Shape & { path: string, method: string } => {
  const e = event as LatticeV2Shape | null | undefined
  return e?.version === '2.0' && typeof e.method === 'string' && typeof e.path === 'string' &&
    typeof e.requestContext?.targetGroupArn === 'string'
}

/** True for a Lattice event of either structure. */
export const isLatticeEvent = (event: unknown): boolean => isLatticeV1(event) || isLatticeV2(event)

/**
 * The principal Lattice authenticated with IAM auth (a SigV4-signed request to a service or
 * service network whose auth type is `AWS_IAM`), in a v2 event's `requestContext.identity`:
 * an IAM ARN, an assumed role with its session name. Lattice sets it itself; no header a client
 * sends is read. A v1 event, or a request Lattice did not authenticate, names none.
 *
 * @example
 * ```ts
 * latticePrincipalOf({
 *   version: '2.0',
 *   path: '/',
 *   method: 'POST',
 *   requestContext: { targetGroupArn: 'arn:…', identity: { principal: 'arn:aws:iam::123456789012:user/alice' } }
 * })
 * // 'arn:aws:iam::123456789012:user/alice'
 * ```
 */
export const latticePrincipalOf = (event: LatticeV2Shape): string | undefined => {
  const principal = event.requestContext?.identity?.principal
  return typeof principal === 'string' && principal !== '' ? principal : undefined
}
