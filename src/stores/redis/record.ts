import type { IdempotencyRecord, RecordStatus } from '../store.js'
import { FIELDS } from './scripts.js'

const STATUSES: readonly string[] = ['IN_PROGRESS', 'COMPLETED', 'FAILED'] satisfies RecordStatus[]

/**
 * The record in a reply of the hash's fields (`HMGET` in `FIELDS` order, normalised: text or
 * null). `undefined` when the key holds no record; a string saying what is wrong when the reply
 * is not a record of ours (a key of the same name written by something else).
 */
export const recordOf = (key: string, reply: unknown): IdempotencyRecord | undefined | string => {
  if (!Array.isArray(reply) || reply.length !== FIELDS.length) return `expected the ${FIELDS.length} fields of a record, got ${describe(reply)}`
  const [status, expiry, lease, token, hash, data, errorName, errorMessage, errorCode] = reply.map((value) => (value === null ? undefined : String(value)))
  if (status === undefined) return reply.every((value) => value === null) ? undefined : 'the hash has no status field'
  if (!STATUSES.includes(status) || !isNumeric(expiry) || (lease !== undefined && !isNumeric(lease))) {
    return `the hash is not a record of RedisStore (status ${JSON.stringify(status)}, expiry ${JSON.stringify(expiry)})`
  }
  const record: IdempotencyRecord = { key, status: status as RecordStatus, expiry: Number(expiry) }
  if (lease !== undefined) record.inProgressExpiry = Number(lease)
  if (token !== undefined) record.leaseToken = token
  if (hash !== undefined) record.payloadHash = hash
  if (data !== undefined) record.responseData = data
  if (errorName !== undefined) record.error = { name: errorName, message: errorMessage ?? '', ...(errorCode === undefined ? {} : { code: errorCode }) }
  return record
}

const isNumeric = (value: string | undefined): value is string => value !== undefined && value.trim() !== '' && Number.isFinite(Number(value))

const describe = (reply: unknown): string => {
  if (Array.isArray(reply)) return `an array of ${reply.length}`
  return reply === null ? 'nil' : typeof reply
}
