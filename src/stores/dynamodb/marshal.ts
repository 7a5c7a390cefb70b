import type { AttributeValue } from '@aws-sdk/client-dynamodb'

/**
 * Native values to DynamoDB attribute values, for the `transact` entries users write as
 * `@aws-sdk/lib-dynamodb` takes them. Written here so that `transact` needs no module beyond
 * `@aws-sdk/client-dynamodb`, which the store has anyway: lib-dynamodb is an optional peer, and
 * a commit that cannot load it would leave its record IN_PROGRESS until the lease lapsed.
 * The mapping is DynamoDB's own:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
 */

/** What a `DynamoDBDocumentClient`'s `marshallOptions` say that matters here. */
export interface MarshallOptions { removeUndefinedValues?: boolean, convertClassInstanceToMap?: boolean }

/** A value with no attribute value: the path says where it is. */
export class UnmarshallableValueError extends Error {
  constructor (readonly path: string, problem: string) {
    super(`${path} ${problem}`)
    this.name = 'UnmarshallableValueError'
  }
}

const isBinary = (value: unknown): value is Uint8Array | ArrayBuffer =>
  value instanceof Uint8Array || value instanceof ArrayBuffer

/**
 * lib-dynamodb's `NumberValue` (a number kept as its exact text), recognised by shape so lib-dynamodb
 * need not be loaded.
 */
const numberText = (value: unknown): string | undefined => {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined
  if (typeof value === 'bigint') return value.toString()
  // By shape, not class name: a minifying bundler renames the class.
  const wrapped = value as { value?: unknown, toAttributeValue?: unknown } | null
  return typeof wrapped === 'object' && wrapped !== null && typeof wrapped.value === 'string' &&
    typeof wrapped.toAttributeValue === 'function'
    ? wrapped.value
    : undefined
}

const isPlainObject = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value)
  return prototype === null || prototype === Object.prototype
}

/** One native value as an attribute value; `undefined` when it is to be left out (removeUndefinedValues). */
export const toAttributeValue = (
  value: unknown,
  path: string,
  options: MarshallOptions = {}
): AttributeValue | undefined => {
  if (value === undefined) {
    if (options.removeUndefinedValues === true) return undefined
    throw new UnmarshallableValueError(path,
      'is undefined (pass removeUndefinedValues to your DynamoDBDocumentClient to leave it out)')
  }
  if (value === null) return { NULL: true }
  if (typeof value === 'string') return { S: value }
  if (typeof value === 'boolean') return { BOOL: value }
  const number = numberText(value)
  if (number !== undefined) return { N: number }
  if (typeof value === 'number') throw new UnmarshallableValueError(path, `is ${value}, which DynamoDB cannot store`)
  if (isBinary(value)) return { B: value instanceof Uint8Array ? value : new Uint8Array(value) }
  if (typeof value !== 'object') {
    throw new UnmarshallableValueError(path, `is a ${typeof value}, which DynamoDB cannot store`)
  }
  if (value instanceof Set) return setOf(value, path)
  if (Array.isArray(value)) {
    const inList = { ...options, removeUndefinedValues: false }
    return { L: value.map((v, i) => toAttributeValue(v, `${path}[${i}]`, inList) as AttributeValue) }
  }
  if (value instanceof Map) return { M: toAttributeMap(Object.fromEntries(value), path, options) }
  if (!isPlainObject(value) && options.convertClassInstanceToMap !== true) {
    throw new UnmarshallableValueError(path, `is an instance of ${value.constructor?.name ?? 'a class'} ` +
      '(pass convertClassInstanceToMap to your DynamoDBDocumentClient to store its properties)')
  }
  return { M: toAttributeMap(value as Record<string, unknown>, path, options) }
}

/** A map of native values (an item, a key, `ExpressionAttributeValues`) as attribute values. */
export const toAttributeMap = (
  values: Record<string, unknown>,
  path: string,
  options: MarshallOptions = {}
): Record<string, AttributeValue> => {
  const map: Record<string, AttributeValue> = {}
  for (const [name, value] of Object.entries(values)) {
    const attribute = toAttributeValue(value, `${path}.${name}`, options)
    if (attribute !== undefined) map[name] = attribute
  }
  return map
}

/** A Set is a string, number or binary set; DynamoDB has no empty set and no set of mixed types. */
const setOf = (set: Set<unknown>, path: string): AttributeValue => {
  const members = [...set]
  if (members.length === 0) throw new UnmarshallableValueError(path, 'is an empty Set, which DynamoDB cannot store')
  if (members.every((m) => typeof m === 'string')) return { SS: members as string[] }
  const numbers = members.map(numberText)
  if (numbers.every((n) => n !== undefined)) return { NS: numbers as string[] }
  if (members.every(isBinary)) return { BS: members.map((m) => m instanceof Uint8Array ? m : new Uint8Array(m)) }
  throw new UnmarshallableValueError(path,
    'is a Set of mixed or unsupported members (DynamoDB sets hold only strings, only numbers or only binary)')
}
