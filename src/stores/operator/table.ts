import type { IdempotencyRecord, RecordStatus } from '../store.js'

/**
 * What the operator functions need of a store, beside its hot path: every record, page by
 * page; one record; and a delete conditioned on what the operator saw (the record's token and
 * status, and for a lease not forced, that it has lapsed). Each store brings its own, in a file
 * of its own, so that no handler bundle carries it.
 */
export interface RecordTable {
  /** Where the records are, for messages: `table Orders`, `redis://host:6379 (prefix idem:)`. */
  readonly where: string
  /**
   * Every record, one page at a time (a DynamoDB Scan page, a Redis SCAN step); `pageSize` items looked
   * at per page when given.
   */
  pages: (filter: { status?: RecordStatus, pageSize?: number }) => AsyncIterable<RecordPage>
  /**
   * The record under `key` (strongly consistent), or undefined; throws when the item under `key` is not
   * a record of ours.
   */
  get: (key: string) => Promise<IdempotencyRecord | undefined>
  /**
   * Deletes the record under `key` only while its lease token is `leaseToken` and its status is
   * `status`, and, when `leaseLapsedBefore` is given, its lease ended before that time (epoch ms).
   * A COMPLETED record only with its token. Resolves whether it was deleted: never an
   * unconditional delete.
   */
  deleteIf: (key: string, expected: ExpectedRecord) => Promise<boolean>
}

/**
 * One page of records, and how many items of the page were skipped as not records of ours (another
 * library's, a business row).
 */
export interface RecordPage { records: IdempotencyRecord[], skipped: number }

/** What a conditional delete expects to find. */
export interface ExpectedRecord { leaseToken: string | undefined, status: RecordStatus, leaseLapsedBefore?: number }
