import { describe, expect, test } from '@jest/globals'
import { MAX_RESPONSE_BYTES, parseResponse, serialiseResponse } from '../../../src/lifecycle/response.js'

describe('serialiseResponse', () => {
  test('plain data round-trips through JSON', () => {
    const value = { ok: true, n: 1.5, list: [1, 'a', null, { x: [] }], nested: Object.create(null) }
    const result = serialiseResponse(value)
    expect(result.ok).toBe(true)
    expect(parseResponse((result as { json: string }).json)).toEqual({ ok: true, n: 1.5, list: [1, 'a', null, { x: [] }], nested: {} })
  })

  test('undefined is stored as no data and replays as undefined', () => {
    expect(serialiseResponse(undefined)).toEqual({ ok: true, json: undefined })
    expect(parseResponse(undefined)).toBeUndefined()
  })

  test.each([
    ['a BigInt', { total: 10n }, '$.total is a BigInt'],
    ['NaN', { n: Number.NaN }, '$.n is NaN'],
    ['Infinity', [Infinity], '$[0] is Infinity'],
    ['a function', { f: () => 1 }, '$.f is a function'],
    ['a Map', { m: new Map() }, '$.m is an instance of Map'],
    ['a Date', { at: new Date(0) }, '$.at is an instance of Date'],
    ['a class instance', new (class Order {})(), '$ is an instance of Order'],
    ['undefined in an array', [1, undefined], '$[1] is undefined']
  ])('%s is refused with the path where it was found', (_, value, problem) => {
    const result = serialiseResponse(value)
    expect(result.ok).toBe(false)
    expect((result as { problem: string }).problem).toContain(problem)
  })

  test('a cycle is refused, a shared (acyclic) object is not', () => {
    const shared = { a: 1 }
    expect(serialiseResponse({ x: shared, y: shared }).ok).toBe(true)
    const cycle: Record<string, unknown> = { list: [] }
    ;(cycle.list as unknown[]).push(cycle)
    expect(serialiseResponse(cycle)).toEqual({ ok: false, problem: '$.list[0] is a circular reference' })
  })

  test('a result too big for a 400 KB item is refused with its size', () => {
    const result = serialiseResponse('é'.repeat(MAX_RESPONSE_BYTES / 2 + 1))
    expect(result.ok).toBe(false)
    expect((result as { problem: string }).problem).toMatch(/^it is \d+ bytes of JSON, more than the \d+ that fit in a 400 KB DynamoDB item$/)
    expect(serialiseResponse('a'.repeat(MAX_RESPONSE_BYTES - 2)).ok).toBe(true)
  })
})
