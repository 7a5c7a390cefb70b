import { recordsOf } from './source.js'

/**
 * The `mode` of each batch source, by the `eventSource` its events carry (Kafka's on the event, the
 * others' on each record). Only the names: what `middy-idempotency/event` needs to refuse a batch
 * without carrying the batch sources themselves (sources/index.ts recognises the same events).
 */
const BATCH_EVENT_SOURCES: Record<string, string> = {
  'aws:sqs': 'sqs',
  'aws:kinesis': 'kinesis',
  'aws:dynamodb': 'dynamodb',
  'aws:kafka': 'kafka',
  SelfManagedKafka: 'kafka'
}

/** The batch source `event` comes from, as a `mode` name, or undefined when it is no batch. */
export const batchModeOf = (event: unknown): string | undefined => {
  const own = (event as { eventSource?: unknown } | null | undefined)?.eventSource
  if (typeof own === 'string' && BATCH_EVENT_SOURCES[own] === 'kafka') return 'kafka'
  const records = recordsOf(event)
  if (records === undefined) return undefined
  // An empty Records array is an SQS batch with nothing to do (as sources/index.ts reads it).
  if (records.length === 0) return 'sqs'
  for (const record of records) {
    const name = (record as { eventSource?: unknown } | null)?.eventSource
    if (typeof name === 'string' && Object.hasOwn(BATCH_EVENT_SOURCES, name)) return BATCH_EVENT_SOURCES[name]
  }
  return undefined
}
