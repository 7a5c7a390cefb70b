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

/**
 * Lambda's batches of sources no batch engine here takes: Amazon MQ and DocumentDB, whose event
 * source mappings take no partial batch response, so Lambda delivers a failed batch again whole
 * (https://docs.aws.amazon.com/lambda/latest/dg/with-mq.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/with-documentdb.html).
 */
const UNTAKEN_EVENT_SOURCES: Record<string, string> = {
  'aws:mq': 'an Amazon MQ batch',
  'aws:rmq': 'an Amazon MQ batch',
  'aws:docdb': 'a DocumentDB change stream batch'
}

/**
 * What `event` is when it is a batch that no batch source here takes per record, or undefined.
 * EventBridge Pipes hands a Lambda target a JSON array of the source's records, even of one
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-batching-concurrency.html):
 * an array is a Pipes batch when its records carry a batch source's `eventSource`.
 */
export const untakenBatchOf = (event: unknown): string | undefined => {
  if (Array.isArray(event)) {
    for (const record of event) {
      const name = (record as { eventSource?: unknown } | null)?.eventSource
      if (typeof name === 'string' && Object.hasOwn(BATCH_EVENT_SOURCES, name)) {
        return `an EventBridge Pipes batch of ${BATCH_EVENT_SOURCES[name]} records`
      }
    }
    return undefined
  }
  const own = (event as { eventSource?: unknown } | null | undefined)?.eventSource
  return typeof own === 'string' && Object.hasOwn(UNTAKEN_EVENT_SOURCES, own) ? UNTAKEN_EVENT_SOURCES[own] : undefined
}
