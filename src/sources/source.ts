import type { Selector } from '../keys/selector.js'

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
  /**
   * Which delivery of the record this is (1 for the first, or when the source does not count), as
   * `onFailure` is told.
   */
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
   * Where an event keeps its records, when not in a `Records` array (Kafka: `records`, a map of
   * `"<topic>-<partition>"` to arrays): how to list them in delivery order, and how to put a
   * subset of them back in that shape. [`Records`]
   */
  layout?: {
    field: string
    list: (event: unknown) => unknown[] | undefined
    shape: (records: readonly TRecord[]) => unknown
  }
  /** Whether `event` is one of this source's, judged on the event itself (Kafka records carry no `eventSource`). */
  recognise?: (event: unknown) => boolean
  /**
   * What Lambda's `batchItemFailures` names the record by, when not its `itemIdentifier` text
   * (Kafka: `{ partition, offset }`).
   */
  identifierValue?: (record: TRecord) => unknown
  /** A part of the default key that the event holds, not the record (a Kafka record's cluster). */
  keyScope?: (event: unknown) => string | undefined
  /**
   * `settled`: the handler's `Promise.allSettled` array is answered as such, for a partial
   * batch middleware after us (SQS: `@middy/sqs-partial-batch-failure`). `native`: the
   * middleware answers Lambda's own `{ batchItemFailures }` itself.
   */
  answer: 'settled' | 'native'
  /** A short name for what `label` and `itemIdentifier` read, for the error when it is missing. */
  identityName: string
  /** What Lambda expects as the `itemIdentifier` of a failed record, for errors: `<its messageId>`. */
  identifierShape: string
  /**
   * The text of an `itemIdentifier` a handler reported, comparable with `itemIdentifier` of a
   * record, or undefined when Lambda cannot read it as one (Kafka: `{ partition, offset }`).
   * [a string that is not empty]
   */
  readIdentifier?: (identifier: unknown) => string | undefined
}

/**
 * What the streams (Kinesis, DynamoDB Streams, Kafka) have in common: they count no deliveries, so
 * every batch is read in bulk first, and Lambda takes their own `{ batchItemFailures }` answer.
 */
export const streamTraits = {
  attempt: () => 1, alwaysRead: true, answer: 'native'
} as const satisfies Partial<BatchSource>

/** The event's `Records` array, or undefined when it has none. */
export const recordsOf = (event: unknown): unknown[] | undefined => {
  const records = (event as { Records?: unknown } | null | undefined)?.Records
  return Array.isArray(records) ? records : undefined
}

/** The records of `event` as `source` lays them out, in delivery order; undefined when it holds none. */
export const listOf = (source: BatchSource, event: unknown): unknown[] | undefined =>
  source.layout?.list(event) ?? (source.layout === undefined ? recordsOf(event) : undefined)

/** The field of the event that holds the records, and the value it holds for `records`. */
export const fieldOf = (source: BatchSource): string => source.layout?.field ?? 'Records'
export const shapeOf = (source: BatchSource, records: readonly unknown[]): unknown =>
  source.layout === undefined ? [...records] : source.layout.shape(records)

/**
 * The text of an `itemIdentifier` a handler put in its answer (see `readIdentifier`), or undefined
 * when Lambda cannot read it.
 */
export const identifierText = (source: BatchSource, identifier: unknown): string | undefined => {
  if (source.readIdentifier !== undefined) return source.readIdentifier(identifier)
  return typeof identifier === 'string' && identifier !== '' ? identifier : undefined
}

/** What `batchItemFailures` names `record` by. */
export const identifierOf = (source: BatchSource, record: unknown): unknown =>
  source.identifierValue === undefined ? source.itemIdentifier(record) : source.identifierValue(record)
