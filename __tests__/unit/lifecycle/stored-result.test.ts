import { describe, expect, test } from '@jest/globals'
import { parseResponse, serialiseResponse } from '../../../src/lifecycle/outcome.js'

/** What a DynamoDB record keeps of a result (`DynamoDBStore.limits`); the limit is the store's to state. */
const MAX_RESPONSE_BYTES = 398 * 1024

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

  // DESIGN §5 and issue 8 #4: a result is stored as what JSON.stringify produces, since that is
  // also what Lambda sends back for it; refusing a Date failed work that had succeeded.
  test.each([
    ['a Date (any toJSON)', { at: new Date(0) }, '{"at":"1970-01-01T00:00:00.000Z"}'],
    ['NaN and Infinity', { n: Number.NaN, list: [Infinity] }, '{"n":null,"list":[null]}'],
    ['a function or a symbol inside an object', { f: () => 1, s: Symbol('s'), kept: 1 }, '{"kept":1}'],
    ['a function, a symbol or undefined inside an array', [() => 1, Symbol('s'), undefined], '[null,null,null]'],
    ['a Map and a Set', { m: new Map([['a', 1]]), s: new Set([1]) }, '{"m":{},"s":{}}'],
    ['a class instance', new (class Order { constructor (readonly id: string) {} })('o-1'), '{"id":"o-1"}']
  ])('%s is stored as what JSON.stringify produces, and replayed as that', (_, value, json) => {
    const result = serialiseResponse(value)
    expect(result).toEqual({ ok: true, json })
    expect(json).toBe(JSON.stringify(value))
    expect(parseResponse(json)).toEqual(JSON.parse(json))
  })

  test.each([
    ['a BigInt', { total: 10n }, '$.total is a BigInt, which JSON cannot represent'],
    ['a BigInt inside what toJSON returns', { at: { toJSON: () => ({ cents: 10n }) } }, '$.at.cents is a BigInt, which JSON cannot represent'],
    ['a function at the top', () => 1, '$ is a function, for which JSON has no text'],
    ['a symbol at the top', Symbol('s'), '$ is a symbol, for which JSON has no text'],
    ['a toJSON returning undefined at the top', { toJSON: () => undefined }, '$ is undefined once its toJSON ran, for which JSON has no text']
  ])('%s is refused with the path where it was found', (_, value, problem) => {
    const result = serialiseResponse(value)
    expect(result.ok).toBe(false)
    expect((result as { problem: string }).problem).toBe(problem)
  })

  test('a toJSON that throws is refused with the thrown error as cause', () => {
    const thrown = new Error('not serialisable')
    const result = serialiseResponse({ receipt: { toJSON: () => { throw thrown } } })
    expect(result).toEqual({ ok: false, problem: '$.receipt: toJSON threw: not serialisable', cause: thrown })
  })

  test('a cycle is refused, a shared (acyclic) object is not', () => {
    const shared = { a: 1 }
    expect(serialiseResponse({ x: shared, y: shared }).ok).toBe(true)
    const cycle: Record<string, unknown> = { list: [] }
    ;(cycle.list as unknown[]).push(cycle)
    expect(serialiseResponse(cycle)).toEqual({ ok: false, problem: '$.list[0] is a circular reference', cause: expect.any(TypeError) })
  })

  test('a result larger than the store keeps is refused with its size; without a limit, nothing is refused for size', () => {
    const result = serialiseResponse('é'.repeat(MAX_RESPONSE_BYTES / 2 + 1), MAX_RESPONSE_BYTES)
    expect(result.ok).toBe(false)
    expect((result as { problem: string }).problem).toMatch(/^it is \d+ bytes of JSON, more than the \d+ the store keeps in a record$/)
    expect(serialiseResponse('a'.repeat(MAX_RESPONSE_BYTES - 2), MAX_RESPONSE_BYTES).ok).toBe(true)
    expect(serialiseResponse('é'.repeat(MAX_RESPONSE_BYTES)).ok).toBe(true)
  })
})
