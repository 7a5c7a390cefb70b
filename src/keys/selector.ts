import * as crypto from 'node:crypto'
import { IdempotencyKeyError } from '../errors.js'

import type { Selector } from '../types.js'

export type { Selector }

/** A compiled selector: returns the selected value, throws `IdempotencyKeyError` naming what was wrong. */
export type Select = (unit: unknown, context: unknown) => unknown

const SEGMENT = /\[(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(\d+))\]|\.?([^.[\]]+)/gy

/**
 * Splits `a.b[0]["c.d"]` into `['a', 'b', '0', 'c.d']` (a JSONPath-style `$.` root is allowed);
 * throws on a malformed path.
 */
export const parsePath = (written: string): string[] => {
  const path = /^\$(?=[.[])/.test(written) ? written.slice(written[1] === '.' ? 2 : 1) : written
  const segments: string[] = []
  SEGMENT.lastIndex = 0
  while (SEGMENT.lastIndex < path.length) {
    const at = SEGMENT.lastIndex
    const match = SEGMENT.exec(path)
    if (match === null || (at > 0 && match[4] !== undefined && path[at] !== '.')) {
      throw new Error(`"${written}" is malformed at character ${at + written.length - path.length}`)
    }
    segments.push(match[1] ?? match[2] ?? match[3] ?? match[4] ?? '')
  }
  if (segments.length === 0) throw new Error(`"${written}" names nothing`)
  return segments
}

/** The paths of a unit whose text is base64: the same for every unit, or read off each one. */
export type EncodedParts = readonly string[] | ((unit: unknown) => readonly string[])

/**
 * Turns a selector option into a function; `what` names it in errors ("key", "payload").
 * `encoded` are the paths of the unit whose text is base64 (Kinesis `kinesis.data`, an HTTP
 * request's `body` when its event says `isBase64Encoded`): a path that reads into one decodes it
 * first, so `kinesis.data.orderId` reads the same JSON with or without `@middy/event-normalizer`
 * (which decodes it in place), and `body.orderId` the same JSON whether API Gateway sent the body
 * as text or as a binary media type.
 */
export const compileSelector = (selector: Selector, what: string, encoded: EncodedParts = []): Select => {
  if (typeof selector === 'function') {
    return (unit, context) => {
      try {
        return selector(unit, context)
      } catch (error) {
        // Already says what is missing (the default HTTP key names the header).
        if (error instanceof IdempotencyKeyError) throw error
        const message = (error as Error)?.message ?? String(error)
        throw new IdempotencyKeyError(`the ${what} function threw: ${message}`, error, { clientError: false })
      }
    }
  }
  const segments = parsePath(selector)
  const isEncoded = (unit: unknown, depth: number): boolean =>
    (typeof encoded === 'function' ? encoded(unit) : encoded).includes(segments.slice(0, depth).join('.'))
  return (unit) => {
    let value: unknown = unit
    for (let i = 0; i < segments.length; i++) {
      if (typeof value === 'string') {
        const base64 = isEncoded(unit, i)
        try {
          value = JSON.parse(base64 ? Buffer.from(value, 'base64').toString('utf8') : value)
        } catch (error) {
          const where = segments.slice(0, i).join('.') || 'the unit'
          throw new IdempotencyKeyError(
            `${what} path "${selector}" reads into ${where}, which is not ${base64 ? 'base64-encoded ' : ''}JSON`,
            error,
            { detail: 'The idempotency key of this request is read from a part that is not valid JSON.' }
          )
        }
      }
      if (value === null || typeof value !== 'object') return undefined
      value = (value as Record<string, unknown>)[segments[i] as string]
    }
    return value
  }
}

/**
 * JSON with sorted object keys, so that equal data hashes equally whatever the order
 * of its properties. Anything that is not plain data is refused rather than flattened:
 * `JSON.stringify` turns a Promise, a Map or a Set into `{}`, and every record would
 * then share one key. Objects with `toJSON` (a Date) are hashed as their JSON.
 *
 * What DynamoDB's types become once unmarshalled (by `@middy/event-normalizer` or
 * `unmarshall`) is data too, each written with a `#` tag no JSON text starts with, so that it
 * never hashes like the plain value it resembles: a Set (members sorted, so insertion order does
 * not count), a Map (entries sorted), bytes (a Buffer or a Uint8Array, as base64) and a number
 * kept as its text (`NumberValue`, from `wrapNumbers`).
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') return `${value}n`
    if (typeof value === 'function' || typeof value === 'symbol') throw new Error(`a ${typeof value} is not data`)
    return JSON.stringify(value) ?? 'null'
  }
  if (typeof (value as { then?: unknown }).then === 'function') {
    throw new Error('it is a Promise: key and payload functions must be synchronous')
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value instanceof Set) return `#set[${[...value].map(canonicalJson).sort().join(',')}]`
  if (value instanceof Map) {
    return `#map{${[...value].map(([k, v]) => `${canonicalJson(k)}:${canonicalJson(v)}`).sort().join(',')}}`
  }
  const bytes = bytesOf(value)
  if (bytes !== undefined) {
    return `#bytes"${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}"`
  }
  if (isNumberValue(value)) return `#number${JSON.stringify(value.value)}`
  if (!isPlainObject(value)) {
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      return canonicalJson((value as { toJSON: () => unknown }).toJSON())
    }
    const className = (value.constructor as { name?: string } | undefined)?.name ?? 'a class'
    throw new Error(`it holds an instance of ${className}, not plain data`)
  }
  const entries = Object.keys(value).sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
  return `{${entries.join(',')}}`
}

/** The bytes of a Buffer, a typed array, a DataView or an ArrayBuffer. */
const bytesOf = (value: object): Uint8Array | undefined => {
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  if (value instanceof ArrayBuffer) return new Uint8Array(value)
  return undefined
}

/**
 * `@aws-sdk/util-dynamodb`'s `NumberValue`, known by its shape (its text and its
 * `toAttributeValue`), not its class: the package need not be loaded, and a minifying bundler
 * renames the class.
 */
const isNumberValue = (value: object): value is { value: string } =>
  typeof (value as { value?: unknown }).value === 'string' &&
  typeof (value as { toAttributeValue?: unknown }).toAttributeValue === 'function'

/**
 * An object literal, `JSON.parse` output or `Object.create(null)`: from any realm (an object
 * made by `structuredClone` or in another VM context has another `Object.prototype`).
 */
export const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === null || Object.getPrototypeOf(proto) === null
}

/**
 * Judged on what is hashed (after `toJSON`): `undefined`, `null`, `''`, a number JSON writes as
 * `null` (`NaN`, `Infinity`: `Number()` of a missing id), and arrays and plain objects made only
 * of those (`{ id: undefined }`, `{}`, `[null]`). `0`, `false` and a valid Date are values.
 */
export const isEmptySelection = (value: unknown): boolean => {
  const hashed = asHashed(value)
  if (hashed === undefined || hashed === null || hashed === '') return true
  if (typeof hashed === 'number') return !Number.isFinite(hashed)
  if (typeof hashed !== 'object') return false
  if (Array.isArray(hashed)) return hashed.every(isEmptySelection)
  if (hashed instanceof Set) return [...hashed].every(isEmptySelection)
  if (hashed instanceof Map) return [...hashed.values()].every(isEmptySelection)
  const bytes = bytesOf(hashed)
  if (bytes !== undefined) return bytes.byteLength === 0
  if (!isPlainObject(hashed)) return false
  return Object.values(hashed).every(isEmptySelection)
}

/** What `canonicalJson` hashes of an object with `toJSON` (a Date, a class of the user's). */
const asHashed = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && !isPlainObject(value) && bytesOf(value) === undefined &&
  typeof (value as { toJSON?: unknown }).toJSON === 'function'
    ? (value as { toJSON: () => unknown }).toJSON()
    : value

// Node's one-shot `crypto.hash` takes a third of `createHash`'s time for a key or a message body,
// and every record hashes two. Every Node the package supports (22+) has it; a crypto without it
// (a test's stand-in) hashes the same digest the long way.
export const sha256HexWith = (
  lib: Pick<typeof crypto, 'createHash'> & { hash?: unknown }
): (text: string) => string => {
  const oneShot = lib.hash as ((algorithm: string, data: string, encoding: 'hex') => string) | undefined
  return typeof oneShot === 'function'
    ? (text) => oneShot('sha256', text, 'hex')
    : (text) => lib.createHash('sha256').update(text).digest('hex')
}
const sha256Hex = sha256HexWith(crypto)

/** sha256 in hex of the canonical JSON of `value`. */
export const hashOf = (value: unknown): string => sha256Hex(canonicalJson(value))

/**
 * `namespace#sha256(...)`: no raw business data in the partition key; two functions never
 * collide. With a tenant (Lambda tenant isolation), `namespace#tenant#sha256(...)`, the tenant
 * percent-encoded so that no `#` (nor `{`, a Redis hash tag) of its own can make it read as
 * another tenant: an operator sees whose record it is. (A namespace holding `#` is refused by the
 * options for the same reason.) No tenant (or an empty one) keeps the key
 * every earlier version stored, so records in flight across an upgrade still match.
 */
export const storedKey = (namespace: string, selection: unknown, tenant?: string): string =>
  tenant === undefined || tenant === ''
    ? `${namespace}#${hashOf(selection)}`
    : `${namespace}#${encodeURIComponent(tenant)}#${hashOf(selection)}`
