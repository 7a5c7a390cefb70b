import type { IdempotencyError } from '../errors.js'
import type { FailureDecision, OutcomeKind } from '../types.js'

/*
 * What becomes of a unit, as the lifecycle passes it on (the claim's decision, our hold, the
 * settled result) and as the store keeps its result (JSON text).
 */

/** What the claim decided for a unit of work (docs/architecture.md: the batch flow, claim). */
export type ClaimDecision =
  /**
   * Claimed: the handler runs it, holding `leaseToken`. `unclaimed` (`effects: 'transact-only'`):
   * nothing was written; the record is claimed and completed by its one commit.
   */
  | { kind: 'run', leaseToken: string, unclaimed?: true }
  /** COMPLETED before: its stored response is replayed. */
  | { kind: 'replay', response: unknown }
  /** Cannot run: in progress elsewhere, FAILED before, payload mismatch, no key, store fault, held back. */
  | { kind: 'rejected', error: IdempotencyError }

export const fulfilled = (value: unknown): PromiseFulfilledResult<unknown> => ({ status: 'fulfilled', value })
export const rejected = (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason })

/**
 * Our hold on a record: the lease token of our claim. `unclaimed` (`effects: 'transact-only'`):
 * nothing was written yet, the commit was to claim; the token is only the commit's.
 */
export interface Hold { leaseToken: string, unclaimed?: true }

/** How a unit that ran ends: what it reports, and what became of it (for `onOutcome`). */
export interface Settlement {
  result: PromiseSettledResult<unknown>
  kind: OutcomeKind
  /** For a unit that failed: what was done with its record (`delete`: released; `fail`: kept FAILED). */
  onFailure?: FailureDecision
}

/**
 * Results are stored as the text `JSON.stringify` makes of them and replayed with `JSON.parse`
 * (docs/architecture.md: results and edges). That text is also what Lambda itself sends back for a
 * result (API Gateway, a direct invoke), so a replay answers what the first delivery answered: a
 * `Date` is its ISO string, `NaN` and `Infinity` are `null`, a `Map` or `Set` is `{}`, a class
 * instance is its own enumerable properties, and functions, symbols and `undefined` are left out of
 * objects and are `null` in arrays.
 *
 * Refused, because JSON has no text for them at all (the work is then kept FAILED, never re-run):
 * - a Promise or any other thenable anywhere in the result: `JSON.stringify` would store `{}`
 *   before the work it stands for has finished (a handler that forgot an `await`);
 * - a BigInt anywhere (after any `toJSON`), and a circular reference: `JSON.stringify` throws;
 * - a `toJSON` that throws (the thrown error is the `cause`);
 * - a function or a symbol as the whole result, or a `toJSON` that turns the whole result into
 *   `undefined`: `JSON.stringify` returns no text, and replaying "nothing" would not be what the
 *   first delivery got. (An `undefined` result itself is stored as no data and replayed as
 *   `undefined`.)
 * - more JSON than the store keeps (`limits.maxResponseBytes`: a DynamoDB item holds 400 KB).
 */

/** The result serialised, or the reason it cannot be. `json` is undefined for an `undefined` result. */
export type Serialised = { ok: true, json: string | undefined } | { ok: false, problem: string, cause?: unknown }

export const serialiseResponse = (value: unknown, maxBytes = Infinity): Serialised => {
  if (value === undefined) return { ok: true, json: undefined }
  let json: string | undefined
  try {
    json = JSON.stringify(value, refuseThenables)
  } catch (error) {
    return { ok: false, ...explainFailure(value, error) }
  }
  if (json === undefined) {
    const what = typeof value === 'function' || typeof value === 'symbol'
      ? `a ${typeof value}`
      : 'undefined once its toJSON ran'
    return { ok: false, problem: `$ is ${what}, for which JSON has no text` }
  }
  if (maxBytes !== Infinity) {
    const bytes = Buffer.byteLength(json)
    if (bytes > maxBytes) {
      return {
        ok: false, problem: `it is ${bytes} bytes of JSON, more than the ${maxBytes} the store keeps in a record`
      }
    }
  }
  return { ok: true, json }
}

export const parseResponse = (json: string | undefined): unknown => json === undefined ? undefined : JSON.parse(json)

const isThenable = (value: unknown): boolean =>
  value !== null && (typeof value === 'object' || typeof value === 'function') &&
  typeof (value as { then?: unknown }).then === 'function'

/** A replacer sees every value after its `toJSON`: a thenable there is work not finished. */
const refuseThenables = (_key: string, value: unknown): unknown => {
  if (isThenable(value)) throw new TypeError('a Promise (or thenable) cannot be stored: await it first')
  return value
}

/** Why `JSON.stringify` threw, with the path where it happened; the thrown error is the cause. */
const explainFailure = (value: unknown, error: unknown): { problem: string, cause: unknown } => {
  try {
    const problem = findUnstorable(value, '', '$', new Set())
    if (problem !== undefined) return { problem, cause: error }
  } catch (thrown) {
    if (thrown instanceof ToJsonError) {
      const message = (thrown.cause as Error)?.message ?? String(thrown.cause)
      return { problem: `${thrown.path}: toJSON threw: ${message}`, cause: thrown.cause }
    }
  }
  return { problem: `JSON.stringify failed: ${(error as Error)?.message ?? String(error)}`, cause: error }
}

/** A `toJSON` threw while the path to the problem was looked for. */
class ToJsonError extends Error {
  constructor (readonly path: string, cause: unknown) {
    super('toJSON threw', { cause })
  }
}

/**
 * Walks the value as `JSON.stringify` does (`toJSON` first, then own enumerable properties)
 * to name where it cannot go on. Only called once `JSON.stringify` has thrown.
 */
const findUnstorable = (input: unknown, name: string, path: string, seen: Set<object>): string | undefined => {
  let value = input
  const toJSON = (value as { toJSON?: unknown } | null | undefined)?.toJSON
  if (typeof toJSON === 'function') {
    try {
      value = toJSON.call(value, name)
    } catch (error) {
      throw new ToJsonError(path, error)
    }
  }
  if (typeof value === 'bigint' || value instanceof BigInt) return `${path} is a BigInt, which JSON cannot represent`
  if (isThenable(value)) {
    return `${path} is a Promise (or thenable): its work had not finished when the result was returned`
  }
  if (value === null || typeof value !== 'object') return undefined
  if (seen.has(value)) return `${path} is a circular reference`
  seen.add(value)
  const isArray = Array.isArray(value)
  for (const [k, v] of Object.entries(value)) {
    const problem = findUnstorable(v, k, isArray ? `${path}[${k}]` : `${path}.${k}`, seen)
    if (problem !== undefined) return problem
  }
  seen.delete(value)
  return undefined
}
