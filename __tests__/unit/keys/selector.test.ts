import { describe, expect, test } from '@jest/globals'
import { IdempotencyKeyError } from '../../../src/errors.js'
import { createHash } from 'node:crypto'
import { canonicalJson, compileSelector, hashOf, parsePath, sha256HexWith, storedKey } from '../../../src/keys/selector.js'

describe('parsePath', () => {
  test('splits dots, indexes and quoted names', () => {
    expect(parsePath('body.items[0].id')).toEqual(['body', 'items', '0', 'id'])
    expect(parsePath('headers["idempotency-key"]')).toEqual(['headers', 'idempotency-key'])
    expect(parsePath("a['b.c'].d")).toEqual(['a', 'b.c', 'd'])
  })

  test('accepts a JSONPath-style $ root', () => {
    expect(parsePath('$.body.orderId')).toEqual(['body', 'orderId'])
    expect(parsePath('$["body"].id')).toEqual(['body', 'id'])
    expect(parsePath('$a')).toEqual(['$a'])
  })

  test('refuses malformed paths with the position', () => {
    expect(() => parsePath('a..b')).toThrow('"a..b" is malformed at character 1')
    expect(() => parsePath('a.')).toThrow(/malformed/)
    expect(() => parsePath('')).toThrow('"" names nothing')
  })
})

describe('compileSelector', () => {
  test('a path reads into JSON strings met on the way, as SQS and API Gateway bodies are', () => {
    const select = compileSelector('body.order.id', 'key')
    expect(select({ body: JSON.stringify({ order: { id: 'o-1' } }) }, {})).toBe('o-1')
  })

  test('a path that finds nothing selects undefined', () => {
    expect(compileSelector('body.missing', 'key')({ body: '{}' }, {})).toBeUndefined()
    expect(compileSelector('a.b.c', 'key')({ a: 1 }, {})).toBeUndefined()
  })

  test('a path into a body that is not JSON is an IdempotencyKeyError naming the path', () => {
    const select = compileSelector('body.orderId', 'key')
    expect(() => select({ body: 'plain text' }, {})).toThrow(IdempotencyKeyError)
    expect(() => select({ body: 'plain text' }, {})).toThrow('key path "body.orderId" reads into body, which is not JSON')
  })

  test('a function that throws becomes an IdempotencyKeyError with the cause kept', () => {
    const cause = new Error('no tenant')
    const select = compileSelector(() => { throw cause }, 'key')
    try {
      select({}, {})
      throw new Error('expected a throw')
    } catch (error) {
      expect(error).toBeInstanceOf(IdempotencyKeyError)
      expect((error as Error).message).toBe('the key function threw: no tenant')
      expect((error as Error).cause).toBe(cause)
    }
  })

  test('a function gets the unit and the context', () => {
    const select = compileSelector((unit: { id: string }, context: unknown) => `${unit.id}:${(context as { functionName: string }).functionName}`, 'key')
    expect(select({ id: 'x' }, { functionName: 'f' })).toBe('x:f')
  })
})

describe('canonical JSON and keys', () => {
  test('equal data hashes equally whatever the order of its properties', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}')
    expect(hashOf({ a: 1, b: 2 })).toBe(hashOf({ b: 2, a: 1 }))
    expect(hashOf({ a: 1 })).not.toBe(hashOf({ a: 2 }))
  })

  test('a string and the number it spells are different keys', () => {
    expect(hashOf('1')).not.toBe(hashOf(1))
  })

  test('a stored key is namespace#sha256 and carries no raw business data', () => {
    const key = storedKey('payments', 'card-4242-4242')
    expect(key).toMatch(/^payments#[0-9a-f]{64}$/)
    expect(key).not.toContain('4242')
    expect(storedKey('other-function', 'card-4242-4242')).not.toBe(key)
  })
})

test('a Node 20 without the one-shot crypto.hash hashes the same digest the long way', () => {
  const text = '"0f8fad5b-d9cb-4980-b0bb-19f61f2b7ba4"'
  const expected = createHash('sha256').update(text).digest('hex')
  expect(sha256HexWith({ createHash })(text)).toBe(expected)
  expect(hashOf('0f8fad5b-d9cb-4980-b0bb-19f61f2b7ba4')).toBe(expected)
})
