/**
 * Results are stored as JSON and replayed with `JSON.parse`. Plain `JSON.stringify`
 * is lossy (a `Map` becomes `{}`, `NaN` becomes `null`, a `Date` a string), and a
 * replayed duplicate must get what the first delivery got, so anything that would
 * not come back identical is refused with the path where it was found.
 */

// DynamoDB's item limit is 400 KB, names and values together:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
// The rest of a record (key, status, expiry, token, hash and their names) stays well under 2 KB.
export const MAX_RESPONSE_BYTES = 400 * 1024 - 2 * 1024

/** The result serialised, or the reason it cannot be. `json` is undefined for an `undefined` result. */
export type Serialised = { ok: true, json: string | undefined } | { ok: false, problem: string, cause?: unknown }

export const serialiseResponse = (value: unknown): Serialised => {
  if (value === undefined) return { ok: true, json: undefined }
  const problem = findUnstorable(value, '$', new Set())
  if (problem !== undefined) return { ok: false, problem }
  const json = JSON.stringify(value)
  const bytes = Buffer.byteLength(json)
  if (bytes > MAX_RESPONSE_BYTES) {
    return { ok: false, problem: `it is ${bytes} bytes of JSON, more than the ${MAX_RESPONSE_BYTES} that fit in a 400 KB DynamoDB item` }
  }
  return { ok: true, json }
}

export const parseResponse = (json: string | undefined): unknown => json === undefined ? undefined : JSON.parse(json)

const findUnstorable = (value: unknown, path: string, seen: Set<object>): string | undefined => {
  switch (typeof value) {
    case 'string': case 'boolean': return undefined
    case 'number': return Number.isFinite(value) ? undefined : `${path} is ${value}, which JSON cannot represent`
    case 'bigint': return `${path} is a BigInt, which JSON cannot represent`
    case 'undefined': return undefined
    case 'function': case 'symbol': return `${path} is a ${typeof value}`
  }
  if (value === null) return undefined
  const object = value as object
  if (seen.has(object)) return `${path} is a circular reference`
  const proto = Object.getPrototypeOf(object)
  const isArray = Array.isArray(object)
  if (!isArray && proto !== Object.prototype && proto !== null) {
    return `${path} is an instance of ${(object.constructor as { name?: string } | undefined)?.name ?? 'a class'}, not plain data`
  }
  seen.add(object)
  for (const [k, v] of Object.entries(object)) {
    if (isArray && v === undefined) return `${path}[${k}] is undefined, which JSON turns into null`
    const problem = findUnstorable(v, isArray ? `${path}[${k}]` : `${path}.${k}`, seen)
    if (problem !== undefined) return problem
  }
  seen.delete(object)
  return undefined
}
