import type { Selector } from '../lifecycle/key.js'

/**
 * What differs from one batch event source to another; everything else (claiming, in-batch
 * copies, the pre-read, ordering groups, per-record settlement, the answer) is the batch
 * engine's, written once. Adding a source is one small file and one line in `sources`.
 */
export interface BatchSource<TRecord = any> {
  /** The `mode` option that forces this source. */
  mode: string
  /** How its events are called in errors: `an SQS event`. */
  eventName: string
  /** How its ordering groups are called in errors: `message group`. */
  groupName: string
  /** The records' `eventSource`, by which `mode: 'auto'` recognises the event. */
  eventSource: string
  /** Where a record is put in errors and logs: `record <messageId>`. */
  label: (record: TRecord) => string
  /**
   * The `itemIdentifier` Lambda expects in `batchItemFailures`, or undefined when the record
   * has none (it is then refused: a failure that cannot be reported would be acknowledged).
   */
  itemIdentifier: (record: TRecord) => string | undefined
  /**
   * The records whose order must be kept (a FIFO message group, a stream's partition key),
   * or undefined when the source promises none. Asked once per batch, with every record.
   */
  orderingGroups: (records: readonly TRecord[]) => ((record: TRecord) => string) | undefined
  /** Which delivery of the record this is (1 for the first, or when the source does not count), as `onFailure` is told. */
  attempt: (record: TRecord) => number
  /**
   * Read the batch's records in bulk before claiming them even on a first attempt. For
   * sources that count no deliveries (streams), where a retried batch cannot be told apart
   * and holds, after its first failure, records that already completed.
   */
  alwaysRead?: boolean
  /** Key and payload when the options give none. */
  defaults: { key: Selector<TRecord>, payload: Selector<TRecord> }
  /** Paths of a record whose text is base64-encoded JSON: a key or payload path into them reads the decoded JSON. */
  encoded?: readonly string[]
  /**
   * `settled`: the handler's `Promise.allSettled` array is answered as such, for a partial
   * batch middleware after us (SQS: `@middy/sqs-partial-batch-failure`). `native`: the
   * middleware answers Lambda's own `{ batchItemFailures }` itself.
   */
  answer: 'settled' | 'native'
  /** A short name for what `label` and `itemIdentifier` read, for the error when it is missing. */
  identityName: string
}

/** True when `event.Records` holds at least one record of `source` (an empty `Records` counts for the first source asked). */
export const recordsOf = (event: unknown): unknown[] | undefined => {
  const records = (event as { Records?: unknown } | null | undefined)?.Records
  return Array.isArray(records) ? records : undefined
}
