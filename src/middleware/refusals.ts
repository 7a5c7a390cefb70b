/**
 * The events an entry point of the package refuses, and why: one table for the three entries, so
 * that each refusal names what takes the event instead (docs/architecture.md: entry points).
 */
export type Entry = 'middy-idempotency' | 'middy-idempotency/batch' | 'middy-idempotency/event'

const TAKES: Record<Entry, string> = {
  'middy-idempotency': '',
  'middy-idempotency/batch': 'SQS, Kinesis, DynamoDB Streams and Kafka batches',
  'middy-idempotency/event': 'whole events'
}

const lead = (entry: Entry): string =>
  entry === 'middy-idempotency'
    ? 'idempotency: this is'
    : `idempotency from '${entry}' takes ${TAKES[entry]}, and this is`

const ONE_UNIT = "set mode: 'event' to take the batch as one unit"

export const refusals = {
  /** A `mode` the entry has no family for, refused where the middleware is built. */
  mode: (entry: Entry, mode: string): string =>
    `idempotency from '${entry}' takes ${TAKES[entry]}: mode '${mode}' needs idempotency from 'middy-idempotency' ` +
    `or 'middy-idempotency/${mode === 'event' ? 'event' : 'batch'}'`,
  /** A batch that an entry without the batch family meets. */
  batch: (entry: Entry, mode: string): string =>
    `${lead(entry)} a ${mode} batch: import idempotency and perRecord from 'middy-idempotency/batch' ` +
    `(or 'middy-idempotency'), or ${ONE_UNIT}`,
  /** A whole event that an entry without the whole-event family meets. */
  wholeEvent: (entry: Entry): string =>
    `${lead(entry)} no batch: import idempotency from 'middy-idempotency/event' (whole events, HTTP) ` +
    "or 'middy-idempotency' (every event)",
  /**
   * A batch no source takes per record (Amazon MQ, DocumentDB, an EventBridge Pipes array): taken
   * whole, one failed record would run its finished neighbours again, so it needs `mode: 'event'`.
   */
  untaken: (entry: Entry, untaken: string, takesWholeEvents: boolean): string =>
    `${lead(entry)} ${untaken}, which no idempotency middleware takes per record: ` +
    `run each record through makeIdempotent() from 'middy-idempotency', or ${ONE_UNIT}` +
    (takesWholeEvents ? '' : " with the idempotency of 'middy-idempotency/event'")
}
