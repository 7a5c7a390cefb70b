import type { StoredError } from '../../errors.js'
import { isRecordStatus, type IdempotencyRecord } from '../store.js'

/**
 * A record's text (scripts.ts: five header lines, then the body) in both directions: the body the
 * client writes for a settlement, and the record read back from a reply.
 */

/** The body of a COMPLETED record: `d` and the result's JSON text, or nothing for no result. */
export const completedBody = (responseData: string | undefined): string =>
  responseData === undefined ? '' : `d${responseData}`

/** The body of a FAILED record: `e` and the stored error as JSON (`[name, message]`, and its code when it has one). */
export const failedBody = ({ name, message, code }: StoredError): string =>
  `e${JSON.stringify(code === undefined ? [name, message] : [name, message, code])}`

/** Whether `text` can go in a header line as it is. */
export const fitsHeader = (text: string): boolean => !text.includes('\n')

/**
 * The record in a reply (text, or null: normalised). `undefined` when the key holds nothing; a
 * string saying what is wrong when the value is not a record of ours (a key of the same name
 * written by something else).
 */
export const recordOf = (key: string, reply: unknown): IdempotencyRecord | undefined | string => {
  if (reply === null) return undefined
  if (typeof reply !== 'string') return `expected a record's text, got ${describe(reply)}`
  const ends: number[] = []
  for (let at = -1, line = 0; line < 5; line++) {
    at = reply.indexOf('\n', at + 1)
    if (at === -1) return notOurs(reply)
    ends.push(at)
  }
  const [statusEnd, expiryEnd, leaseEnd, tokenEnd, hashEnd] = ends as [number, number, number, number, number]
  const status = reply.slice(0, statusEnd)
  const expiry = reply.slice(statusEnd + 1, expiryEnd)
  const lease = reply.slice(expiryEnd + 1, leaseEnd)
  if (!isRecordStatus(status) || !isNumeric(expiry) || (lease !== '' && !isNumeric(lease))) return notOurs(reply)
  const record: IdempotencyRecord = { key, status, expiry: Number(expiry) }
  if (lease !== '') record.inProgressExpiry = Number(lease)
  const token = reply.slice(leaseEnd + 1, tokenEnd)
  if (token !== '') record.leaseToken = token
  const hash = reply.slice(tokenEnd + 1, hashEnd)
  if (hash !== '') record.payloadHash = hash
  const kind = reply[hashEnd + 1]
  if (kind === 'd') record.responseData = reply.slice(hashEnd + 2)
  else if (kind === 'e') {
    const error = errorOf(reply.slice(hashEnd + 2))
    if (error === undefined) return `the stored error of ${JSON.stringify(status)} record is not RedisStore's`
    record.error = error
  } else if (kind !== undefined) return notOurs(reply)
  return record
}

const errorOf = (json: string): StoredError | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed) || parsed.length < 2 || parsed.length > 3) return undefined
  if (!parsed.every((part) => typeof part === 'string')) return undefined
  const [name, message, code] = parsed as [string, string, string?]
  return code === undefined ? { name, message } : { name, message, code }
}

// As the scripts' NUMBER (scripts.ts): what one reads as a number, the other does too.
const isNumeric = (value: string): boolean => /^-?\d+\.?\d*$/.test(value)

// Names the value by its start only: a foreign value may be large, or hold what should not be logged whole.
const notOurs = (text: string): string =>
  `the value is not a record of RedisStore (it starts ${JSON.stringify(text.slice(0, 16))})`

const describe = (reply: unknown): string => Array.isArray(reply) ? `an array of ${reply.length}` : typeof reply
