import { describe, expect, test } from '@jest/globals'
import { build } from 'esbuild'
import { NumberValue } from '@aws-sdk/lib-dynamodb'
import { toAttributeMap, toAttributeValue, UnmarshallableValueError } from '../../../src/stores/dynamodb/marshal.js'

/** What a bundle of `entry` imports from outside, as a user bundles it (the AWS SDK external, as on Lambda). */
const importsOf = async (entry: string): Promise<string[]> => {
  const result = await build({ entryPoints: [entry], bundle: true, write: false, metafile: true, platform: 'node', format: 'esm', external: ['@aws-sdk/*'], logLevel: 'silent' })
  return Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((i) => !i.path.startsWith('node:')).map((i) => i.path))
}

describe('entry points load only the store they name', () => {
  test('middy-idempotency/dynamodb imports @aws-sdk/client-dynamodb and nothing of @aws-sdk/lib-dynamodb (transact needs no more)', async () => {
    const imports = await importsOf('src/dynamodb.ts')
    expect(imports).toContain('@aws-sdk/client-dynamodb')
    expect(imports.filter((path) => path.includes('lib-dynamodb'))).toEqual([])
  })

  test('middy-idempotency (the root) imports no AWS SDK module at all', async () => {
    expect(await importsOf('src/index.ts')).toEqual([])
  })
})

describe('native values as DynamoDB attribute values', () => {
  test('scalars, binary, lists, maps and the three kinds of set, as lib-dynamodb marshals them', () => {
    expect(toAttributeMap({
      s: 'a', n: 1.5, big: 12345678901234567890n, exact: new NumberValue('0.1000000000000000000001'), t: true, none: null,
      bytes: new Uint8Array([1, 2]), list: ['a', 1], map: new Map([['k', 'v']]), object: { nested: { deep: 1 } },
      ss: new Set(['x', 'y']), ns: new Set([1, 2n]), bs: new Set([new Uint8Array([3])])
    }, '$')).toEqual({
      s: { S: 'a' }, n: { N: '1.5' }, big: { N: '12345678901234567890' }, exact: { N: '0.1000000000000000000001' }, t: { BOOL: true }, none: { NULL: true },
      bytes: { B: new Uint8Array([1, 2]) }, list: { L: [{ S: 'a' }, { N: '1' }] }, map: { M: { k: { S: 'v' } } }, object: { M: { nested: { M: { deep: { N: '1' } } } } },
      ss: { SS: ['x', 'y'] }, ns: { NS: ['1', '2'] }, bs: { BS: [new Uint8Array([3])] }
    })
  })

  test('undefined is refused, naming where it is, unless removeUndefinedValues leaves it out', () => {
    expect(() => toAttributeMap({ a: { b: undefined } }, 'entry 0 (Put on Orders) Item')).toThrow(new UnmarshallableValueError('entry 0 (Put on Orders) Item.a.b', 'is undefined (pass removeUndefinedValues to your DynamoDBDocumentClient to leave it out)'))
    expect(toAttributeMap({ a: 1, b: undefined }, '$', { removeUndefinedValues: true })).toEqual({ a: { N: '1' } })
  })

  test('what DynamoDB cannot store is refused with the path: NaN, an empty Set, a mixed Set, a class instance, a function', () => {
    expect(() => toAttributeValue(Number.NaN, '$.n')).toThrow('$.n is NaN')
    expect(() => toAttributeValue(new Set(), '$.s')).toThrow('$.s is an empty Set')
    expect(() => toAttributeValue(new Set(['a', 1]), '$.s')).toThrow('$.s is a Set of mixed')
    expect(() => toAttributeValue(new (class Order { id = 1 })(), '$.o')).toThrow('$.o is an instance of Order')
    expect(toAttributeValue(new (class Order { id = 1 })(), '$.o', { convertClassInstanceToMap: true })).toEqual({ M: { id: { N: '1' } } })
    expect(() => toAttributeValue(() => 1, '$.f')).toThrow('$.f is a function')
  })
})
