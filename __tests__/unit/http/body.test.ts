import { describe, expect, test } from '@jest/globals'
import { base64PartsOf, isBase64Body, requestBodyOf } from '../../../src/http/body.js'

/** The body as the client sent it, whichever way API Gateway, ALB or VPC Lattice passed it. */
describe('requestBodyOf', () => {
  const encoded = (bytes: Buffer | string, flag: 'isBase64Encoded' | 'is_base64_encoded' = 'isBase64Encoded') =>
    ({ body: Buffer.from(bytes).toString('base64'), [flag]: true })

  test('UTF-8 text sent base64-encoded is the string it would have been sent as (v1 Lattice names the flag is_base64_encoded)', () => {
    expect(requestBodyOf(encoded('{"amount":5,"note":"café"}'))).toBe('{"amount":5,"note":"café"}')
    expect(requestBodyOf(encoded('{"amount":5}', 'is_base64_encoded'))).toBe('{"amount":5}')
  })

  test('a byte order mark is kept, as in a body passed as text', () => {
    expect(requestBodyOf(encoded('\uFEFF{"a":1}'))).toBe('\uFEFF{"a":1}')
  })

  test('bytes that are not UTF-8 are the bytes', () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff])
    expect(requestBodyOf(encoded(bytes))).toEqual(bytes)
  })

  test('a body not flagged, one a middleware parsed, or none is left as it is', () => {
    expect(requestBodyOf({ body: 'eyJhIjoxfQ==', isBase64Encoded: false })).toBe('eyJhIjoxfQ==')
    expect(requestBodyOf({ body: { a: 1 }, isBase64Encoded: true })).toEqual({ a: 1 })
    expect(requestBodyOf({ isBase64Encoded: true })).toBeUndefined()
    expect(requestBodyOf(null)).toBeUndefined()
  })

  test('only a flagged string body is base64: what a key path decodes before reading into it', () => {
    expect(isBase64Body({ body: 'e30=', isBase64Encoded: true })).toBe(true)
    expect(isBase64Body({ body: 'e30=', isBase64Encoded: 'true' })).toBe(false)
    expect(base64PartsOf({ body: 'e30=', is_base64_encoded: true })).toEqual(['body'])
    expect(base64PartsOf({ body: '{}' })).toEqual([])
  })
})
