import { describe, expect, test } from '@jest/globals'
import { NumberValue } from '@aws-sdk/lib-dynamodb'
import utilDynamoDB from '@aws-sdk/util-dynamodb'
import { canonicalJson, hashOf, isEmptySelection } from '../../../src/keys/selector.js'

const { unmarshall } = utilDynamoDB

/** What the normalizer and unmarshall make of DynamoDB's types hashes, canonically and without collisions. */
describe('hashing what @middy/event-normalizer and unmarshall produce', () => {
  test('a Set hashes the same whatever its insertion order', () => {
    expect(hashOf({ tags: new Set(['a', 'b']) })).toBe(hashOf({ tags: new Set(['b', 'a']) }))
  })

  test('a Map hashes the same whatever its insertion order', () => {
    expect(hashOf(new Map([['a', 1], ['b', 2]]))).toBe(hashOf(new Map([['b', 2], ['a', 1]])))
  })

  test('no collisions: a Set and an array, a Map and an object, bytes and a string or an array, a NumberValue and a string', () => {
    const pairs: Array<[unknown, unknown]> = [
      [new Set(['a']), ['a']],
      [new Map([['a', 1]]), { a: 1 }],
      [Buffer.from('hi'), 'hi'],
      [new Uint8Array([104, 105]), [104, 105]],
      [Buffer.from('hi'), { type: 'Buffer', data: [104, 105] }],
      [new NumberValue('5'), '5'],
      [new Set([1]), new Set(['1'])]
    ]
    for (const [a, b] of pairs) expect(canonicalJson(a)).not.toBe(canonicalJson(b))
  })

  test('equal bytes hash equal whether Buffer or Uint8Array; a whole unmarshalled image with SS, NS, BS, B, L and M is hashable', () => {
    expect(hashOf(Buffer.from([1, 2]))).toBe(hashOf(new Uint8Array([1, 2])))
    const image = unmarshall({
      id: { S: 'o-1' }, tags: { SS: ['x', 'y'] }, sizes: { NS: ['1', '2'] }, blobs: { BS: [new Uint8Array([1])] },
      raw: { B: new Uint8Array([9]) }, list: { L: [{ S: 'a' }, { N: '3' }] }, map: { M: { k: { BOOL: true } } }
    }, { wrapNumbers: true })
    expect(hashOf(image)).toMatch(/^[0-9a-f]{64}$/)
    const reordered = unmarshall({ map: { M: { k: { BOOL: true } } }, tags: { SS: ['y', 'x'] }, id: { S: 'o-1' }, sizes: { NS: ['2', '1'] }, blobs: { BS: [new Uint8Array([1])] }, raw: { B: new Uint8Array([9]) }, list: { L: [{ S: 'a' }, { N: '3' }] } }, { wrapNumbers: true })
    expect(hashOf(reordered)).toBe(hashOf(image))
  })

  test('an empty Set, Map or byte string is an empty selection; one with members is not', () => {
    expect(isEmptySelection(new Set())).toBe(true)
    expect(isEmptySelection(new Map())).toBe(true)
    expect(isEmptySelection(new Uint8Array())).toBe(true)
    expect(isEmptySelection(new Set(['a']))).toBe(false)
    expect(isEmptySelection(Buffer.from('a'))).toBe(false)
  })

  test('what is not data is still refused: a Promise, a function, an instance without toJSON', () => {
    expect(() => canonicalJson({ p: Promise.resolve(1) })).toThrow(/Promise/)
    expect(() => canonicalJson(new Set([() => 1]))).toThrow(/function/)
    expect(() => canonicalJson(new (class Order {})())).toThrow(/instance of Order/)
  })
})
