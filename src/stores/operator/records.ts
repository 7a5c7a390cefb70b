import { isClaimable, type IdempotencyRecord, type RecordStatus } from '../store.js'
import { IdempotencyStoreError } from '../../errors.js'
import { timeText } from '../../error-text.js'
import type { RecordTable } from './table.js'
import { keyProblem } from './ownership.js'

/**
 * Why `record` is not one a release may delete, whatever its store let through: only an
 * IN_PROGRESS record with its lease token and lease end, or a FAILED one, each with a numeric
 * expiry, is ours to remove.
 */
const notReleasable = (record: IdempotencyRecord): string | undefined => {
  if (!['IN_PROGRESS', 'FAILED', 'COMPLETED'].includes(record.status)) {
    return `its status ${JSON.stringify(record.status)} is none of IN_PROGRESS, FAILED, COMPLETED`
  }
  if (!Number.isFinite(record.expiry)) return 'its expiry is not a number'
  if (record.status === 'IN_PROGRESS' &&
    (record.leaseToken === undefined || !Number.isFinite(record.inProgressExpiry))) {
    return 'it is IN_PROGRESS without a lease token and lease end'
  }
  // The delete of a COMPLETED record is fenced on its token: without one it could not be.
  if (record.status === 'COMPLETED' && record.leaseToken === undefined) return 'it is COMPLETED without a lease token'
  return undefined
}

/**
 * A record as an operator reads it: times as ISO text beside the stored numbers, whether it
 * still protects its key, whether its lease is live, and a short preview of its result or error.
 *
 * @example
 * ```ts
 * const view: RecordView = {
 *   key: 'orders#9f86…',
 *   status: 'FAILED',
 *   expiry: 1767225600,
 *   expiresAt: '2026-01-01T00:00:00.000Z',
 *   expired: false,
 *   protecting: true,
 *   error: { name: 'Error', message: 'declined' }
 * }
 * ```
 */
export interface RecordView {
  key: string
  status: RecordStatus
  /** Epoch seconds after which the record no longer protects its key. */
  expiry: number
  expiresAt: string
  /** Whether `expiry` has passed (the record no longer protects its key, and TTL may delete it). */
  expired: boolean
  /** Whether a claim of its key would be refused now (it has not expired, nor has its lease lapsed). */
  protecting: boolean
  /** IN_PROGRESS: when its lease ends (epoch ms, and ISO), and whether it is still running. */
  inProgressExpiry?: number
  leaseUntil?: string
  leaseLive?: boolean
  leaseToken?: string
  payloadHash?: string
  /** COMPLETED: the stored result's JSON, cut to `previewChars`. */
  result?: string
  /** FAILED: the stored error. */
  error?: { name: string, message: string, code?: string }
}

/** Options of {@link listRecords}. */
export interface ListOptions {
  /** Only records of this status. [all] */
  status?: RecordStatus
  /**
   * How many items one page looks at: a DynamoDB Scan's `Limit`, a Redis SCAN's `COUNT`. [the store's:
   * 1 MB of items; 1000 keys]
   */
  pageSize?: number
  /**
   * Called after each page the store returns, with how many records were read so far (for a
   * progress line) and how many items were skipped so far as not records of this store (another
   * library's records in a shared table, a business table's rows, records written with other
   * attribute names). [none]
   */
  onPage?: (read: number, skipped: number) => void
  /** The clock (epoch ms). [`Date.now`] */
  now?: () => number
  /** How many characters of a result are shown. [120] */
  previewChars?: number
}

/** What {@link releaseRecord} did: what it removed, or why it removed nothing. */
export type ReleaseResult =
  | { released: true, record: RecordView }
  /**
   * `not-found`: no record under the key. `completed`: a COMPLETED record is released only with
   * `completed` (its result is what a redelivery gets). `not-completed`: `completed` was asked and
   * the record is IN_PROGRESS or FAILED. `live-lease`: IN_PROGRESS and its lease is live (its work
   * may be running); `force` releases it. `changed`: the record changed between the read and the
   * conditional delete (completed, taken over), or is not the one `leaseToken` names: nothing was
   * removed.
   */
  | {
    released: false
    reason: 'not-found' | 'completed' | 'not-completed' | 'live-lease' | 'changed'
    record?: RecordView
  }

/** Options of {@link releaseFrom} (and of each store's `releaseRecord`). */
export interface ReleaseOptions {
  /** Release an IN_PROGRESS record whose lease is live: its work may still be running. [false] */
  force?: boolean
  /**
   * Remove the COMPLETED record under the key, so that its work runs again on the next delivery;
   * nothing else (`not-completed`). Ask whoever decides first: a payment runs twice. [false]
   */
  completed?: boolean
  /**
   * Remove the record only if it is still the one read before (its `leaseToken` in the view shown
   * to the operator): a record that replaced it, claimed again since, is left alone. [any]
   */
  leaseToken?: string
  /** The clock (epoch ms). [`Date.now`] */
  now?: () => number
}

const PREVIEW_CHARS = 120

const preview = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`

/** `record` as an operator reads it at `nowMs`. */
export const viewOf = (record: IdempotencyRecord, nowMs: number, previewChars = PREVIEW_CHARS): RecordView => {
  const view: RecordView = {
    key: record.key,
    status: record.status,
    expiry: record.expiry,
    // A time no Date holds (another version's record) is shown as its number: one record must not stop a list.
    expiresAt: timeText(record.expiry * 1000, record.expiry),
    expired: record.expiry < Math.floor(nowMs / 1000),
    protecting: !isClaimable(record, nowMs)
  }
  if (record.status === 'IN_PROGRESS' && record.inProgressExpiry !== undefined) {
    view.inProgressExpiry = record.inProgressExpiry
    view.leaseUntil = timeText(record.inProgressExpiry)
    view.leaseLive = record.inProgressExpiry >= nowMs
  }
  if (record.leaseToken !== undefined) view.leaseToken = record.leaseToken
  if (record.payloadHash !== undefined) view.payloadHash = record.payloadHash
  if (record.status === 'COMPLETED' && record.responseData !== undefined) {
    view.result = preview(record.responseData, previewChars)
  }
  if (record.status === 'FAILED' && record.error !== undefined) view.error = { ...record.error }
  return view
}

/** Every record of `table` (of one status, when asked), read page by page. */
export const listFrom = async (table: RecordTable, options: ListOptions = {}): Promise<RecordView[]> => {
  const nowMs = (options.now ?? Date.now)()
  const found: RecordView[] = []
  let skipped = 0
  const filter = {
    ...(options.status === undefined ? {} : { status: options.status }),
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize })
  }
  for await (const page of table.pages(filter)) {
    let foreign = 0
    for (const record of page.records) {
      // A record of our form under a key we never write is someone else's (ownership.ts).
      if (keyProblem(record.key) !== undefined) foreign++
      else if (options.status === undefined || record.status === options.status) {
        found.push(viewOf(record, nowMs, options.previewChars))
      }
    }
    skipped += page.skipped + foreign
    options.onPage?.(found.length, skipped)
  }
  return found
}

/** The record under `key`, or undefined. */
export const inspectFrom = async (
  table: RecordTable,
  key: string,
  options: { now?: () => number, previewChars?: number } = {}
): Promise<RecordView | undefined> => {
  const record = ours(key, await table.get(key))
  return record === undefined ? undefined : viewOf(record, (options.now ?? Date.now)(), options.previewChars ?? 2000)
}

/** `record`, when it is one of ours; refused with why it is not (ownership.ts). */
export const ours = <T extends IdempotencyRecord | undefined>(key: string, record: T): T => {
  const problem = record === undefined ? undefined : keyProblem(key)
  if (problem !== undefined) {
    throw new IdempotencyStoreError('read', `${key} is not a middy-idempotency record: ${problem}`, { key })
  }
  return record
}

/**
 * Removes a FAILED record, or an IN_PROGRESS one whose lease lapsed (a live one only with
 * `force`), or with `completed` only a COMPLETED one, so that the next delivery runs. The
 * delete is conditioned on the token and status read, and without `force` on the lease having
 * lapsed: a record that completes or is taken over meanwhile is left alone.
 */
export const releaseFrom = async (
  table: RecordTable,
  key: string,
  options: ReleaseOptions = {}
): Promise<ReleaseResult> => {
  const nowMs = (options.now ?? Date.now)()
  const record = ours(key, await table.get(key))
  if (record === undefined) return { released: false, reason: 'not-found' }
  const foreign = notReleasable(record)
  if (foreign !== undefined) {
    throw new IdempotencyStoreError('release', `${key} is not a middy-idempotency record: ${foreign}`, { key })
  }
  const view = viewOf(record, nowMs)
  if (options.leaseToken !== undefined && record.leaseToken !== options.leaseToken) {
    return { released: false, reason: 'changed', record: view }
  }
  if (options.completed === true) {
    if (record.status !== 'COMPLETED') return { released: false, reason: 'not-completed', record: view }
    const deleted = await table.deleteIf(key, { leaseToken: record.leaseToken, status: 'COMPLETED' })
    return deleted ? { released: true, record: view } : await changed(table, key, nowMs)
  }
  if (record.status === 'COMPLETED') return { released: false, reason: 'completed', record: view }
  const live = record.status === 'IN_PROGRESS' && (record.inProgressExpiry ?? 0) >= nowMs
  if (live && options.force !== true) return { released: false, reason: 'live-lease', record: view }
  const deleted = await table.deleteIf(key, {
    leaseToken: record.leaseToken,
    status: record.status,
    ...(record.status === 'IN_PROGRESS' && options.force !== true ? { leaseLapsedBefore: nowMs } : {})
  })
  return deleted ? { released: true, record: view } : await changed(table, key, nowMs)
}

/** The answer when the conditional delete found the record changed: what is there now. */
const changed = async (table: RecordTable, key: string, nowMs: number): Promise<ReleaseResult> => {
  const now = await table.get(key)
  return { released: false, reason: 'changed', ...(now === undefined ? {} : { record: viewOf(now, nowMs) }) }
}
