/**
 * The body of an HTTP request as the client sent it. API Gateway, function URLs, ALB and VPC
 * Lattice hand a binary body (a REST API's `binaryMediaTypes`, any body an HTTP API or function
 * URL does not take for text) to Lambda base64-encoded and say so in `isBase64Encoded` (Lattice
 * v1: `is_base64_encoded`):
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-payload-encodings.html
 */

interface EncodedBody { body?: unknown, isBase64Encoded?: unknown, is_base64_encoded?: unknown }

/**
 * True when `event.body` is base64 text standing for the request's bytes.
 *
 * @example
 * ```ts
 * isBase64Body({ body: 'eyJhIjoxfQ==', isBase64Encoded: true }) // true
 * ```
 */
export const isBase64Body = (event: unknown): boolean => {
  const e = event as EncodedBody | null | undefined
  return typeof e?.body === 'string' && (e.isBase64Encoded === true || e.is_base64_encoded === true)
}

/**
 * The parts of an HTTP event whose text is base64 when it says so: what a key or payload path
 * decodes before reading into it.
 */
export const base64PartsOf = (event: unknown): readonly string[] => isBase64Body(event) ? BODY : NONE
const BODY = ['body'] as const
const NONE = [] as const

// `fatal`: bytes that are not UTF-8 are not text; `ignoreBOM`: a byte order mark stays, as it
// would in a body API Gateway passed as text.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * The request's body as the payload compared when its key comes again: the bytes the client
 * sent, whichever way they reached Lambda. Text (UTF-8) is the string API Gateway would have
 * passed unencoded, so the same body sent base64-encoded or not is the same payload; other bytes
 * (an image) are compared as bytes. A body already parsed by a middleware before ours is
 * compared as it was parsed.
 *
 * @example
 * ```ts
 * requestBodyOf({ body: 'eyJhIjoxfQ==', isBase64Encoded: true }) // '{"a":1}'
 * ```
 */
export const requestBodyOf = (event: unknown): unknown => {
  const body = (event as EncodedBody | null | undefined)?.body
  if (!isBase64Body(event)) return body
  const bytes = Buffer.from(body as string, 'base64')
  try {
    return utf8.decode(bytes)
  } catch {
    return bytes
  }
}
