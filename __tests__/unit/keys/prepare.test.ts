import { describe, expect, test } from '@jest/globals'
import { IdempotencyKeyError } from '../../../src/errors.js'
import { compileSelector, storedKey } from '../../../src/keys/selector.js'
import { prepareUnit, type Selection } from '../../../src/keys/prepare.js'

/** A selection whose key function returns `selected`, whatever the unit. */
const selecting = (selected: unknown): Selection => ({
  namespace: 'ns',
  key: compileSelector(() => selected, 'key'),
  keyName: 'the key function'
})

const prepareError = (selected: unknown): IdempotencyKeyError => {
  try {
    prepareUnit(selecting(selected), {}, {}, 1, 'record m-1')
  } catch (error) {
    return error as IdempotencyKeyError
  }
  throw new Error(`expected ${String(selected)} to be refused as an empty key`)
}

describe('a key selection with no defined value anywhere inside is a missing key', () => {
  test.each([
    ['undefined', undefined, 'found nothing'],
    ['null', null, 'found nothing'],
    ["''", '', "found ''"],
    ['{ id: undefined }', { id: undefined }, 'found { id: undefined }'],
    ['{}', {}, 'found {}'],
    ['[]', [], 'found []'],
    ['[null]', [null], 'found [ null ]'],
    ['{ a: { b: undefined } }', { a: { b: undefined } }, 'found { a: { b: undefined } }'],
    ["{ tenant: '', id: [] }", { tenant: '', id: [] }, "found { tenant: '', id: [] }"]
  ])('%s fails the unit with IdempotencyKeyError naming what was found', (_, selected, found) => {
    const error = prepareError(selected)
    expect(error).toBeInstanceOf(IdempotencyKeyError)
    expect(error.message).toBe(`record m-1: the key is empty (the key function ${found}): nothing to identify the work by`)
  })

  test.each([
    ['0', 0],
    ['false', false],
    ['a string', 'o-1'],
    ['a composite key with every part', { tenant: 'acme', id: ['o-1', 2] }],
    ['one defined value among empty ones', { tenant: undefined, id: [null, 'o-1'] }],
    ['a Date', new Date(0)]
  ])('%s is a key', (_, selected) => {
    expect(prepareUnit(selecting(selected), {}, {}, 1, 'record m-1').key).toMatch(/^ns#[0-9a-f]{64}$/)
  })
})

describe('emptiness is judged on what is hashed', () => {
  class Unset { toJSON (): null { return null } }
  test.each([
    ['NaN (Number() of a missing id), hashed as null', Number(undefined)],
    ['{ id: Infinity }', { id: Infinity }],
    ['an invalid Date, whose JSON is null', new Date('not a date')],
    ['an object whose toJSON() is null', { id: new Unset() }]
  ])('%s is a missing key', (_, selected) => {
    expect(prepareError(selected).message).toMatch(/the key is empty/)
  })

  test.each([
    ['an optional part that is null', { orderId: 'o-1', coupon: null }],
    ['a valueless query parameter', { query: [['expand', '']], idempotencyKey: 'k-1' }],
    ['an EventBridge event with an empty detail', { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {}, resources: [] }]
  ])('%s is a key: only a selection with nothing defined anywhere is missing', (_, selected) => {
    expect(prepareUnit(selecting(selected), {}, {}, 1, 'record m-1').key).toMatch(/^ns#[0-9a-f]{64}$/)
  })
})

describe('the tenant of a tenant-isolated function (context.tenantId) scopes every key', () => {
  const keyFor = (tenantId: unknown): string => prepareUnit(selecting({ orderId: 'o-1' }), {}, tenantId === undefined ? {} : { tenantId }, 1, 'event').key
  const hash = storedKey('ns', { orderId: 'o-1' }).slice('ns#'.length)

  test('without a tenant (none, undefined, null, empty) the key is exactly namespace#hash, as before tenants were read', () => {
    expect(keyFor(undefined)).toBe(`ns#${hash}`)
    expect(keyFor('')).toBe(`ns#${hash}`)
    expect(prepareUnit(selecting({ orderId: 'o-1' }), {}, { tenantId: undefined }, 1, 'event').key).toBe(`ns#${hash}`)
    expect(keyFor(null)).toBe(`ns#${hash}`)
    expect(prepareUnit(selecting({ orderId: 'o-1' }), {}, undefined, 1, 'event').key).toBe(`ns#${hash}`)
  })

  test('with one, the key is namespace#tenant#hash, the same selection hashed', () => {
    expect(keyFor('blue')).toBe(`ns#blue#${hash}`)
    expect(keyFor('green')).toBe(`ns#green#${hash}`)
  })

  test('the tenant is percent-encoded, so no tenant id, whatever it holds, reads as another tenant or as a key without one', () => {
    expect(keyFor('a#b')).toBe(`ns#a%23b#${hash}`)
    expect(keyFor('a%23b')).toBe(`ns#a%2523b#${hash}`)
    expect(keyFor(`x#${hash}`)).not.toBe(keyFor('x'))
    expect(keyFor('{slot}')).toBe(`ns#%7Bslot%7D#${hash}`)
    const tenants = ['a', 'a#b', 'a%23b', 'a b', 'a+b', 'ü', '#', '%']
    expect(new Set([...tenants.map(keyFor), keyFor(undefined)]).size).toBe(tenants.length + 1)
  })

  test('a tenantId that is not a string fails the unit with IdempotencyKeyError naming it (a bug of whoever built the context)', () => {
    expect(() => keyFor(42)).toThrow(IdempotencyKeyError)
    expect(() => keyFor(42)).toThrow('event: context.tenantId is a number, not a string: the key cannot be scoped to its tenant')
    expect(() => keyFor('\ud800')).toThrow('event: context.tenantId is not well-formed Unicode (a lone surrogate): the key cannot be scoped to its tenant')
    let error: unknown
    try { keyFor(42) } catch (thrown) { error = thrown }
    expect((error as IdempotencyKeyError).expose).toBe(false)
  })
  // The durable SDK's context keeps Lambda's as `lambdaContext`; Middy 7's durable mode leaves
  // `context.tenantId` undefined beside it (docs/lambda-modes.md).
  const durableKeyFor = (own: unknown, lambda: unknown): string =>
    prepareUnit(selecting({ orderId: 'o-1' }), {}, { tenantId: own, lambdaContext: { tenantId: lambda } }, 1, 'event').key

  test('in a durable execution the tenant is read from context.lambdaContext.tenantId too', () => {
    expect(durableKeyFor(undefined, 'blue')).toBe(`ns#blue#${hash}`)
    expect(durableKeyFor('blue', 'blue')).toBe(`ns#blue#${hash}`)
    expect(durableKeyFor('blue', undefined)).toBe(`ns#blue#${hash}`)
    expect(durableKeyFor(undefined, undefined)).toBe(`ns#${hash}`)
  })

  test('two tenants that disagree fail the unit with IdempotencyKeyError naming both, rather than scope the key to either', () => {
    expect(() => durableKeyFor('blue', 'green')).toThrow(IdempotencyKeyError)
    expect(() => durableKeyFor('blue', 'green')).toThrow('event: context.tenantId ("blue") and context.lambdaContext.tenantId ("green") name two tenants: the key cannot be scoped to its tenant')
    expect(() => durableKeyFor(undefined, 7)).toThrow('event: context.lambdaContext.tenantId is a number, not a string: the key cannot be scoped to its tenant')
  })
})
