import type { BatchSource } from './source.js'
import { recordsOf } from './source.js'
import { dynamodbStreams } from './dynamodb-streams.js'
import { kafka } from './kafka.js'
import { kinesis } from './kinesis.js'
import { sqs } from './sqs.js'

/** Every batch source, keyed by the records' `eventSource` (the shape of `@middy/event-normalizer`'s table). */
export const sources: Record<string, BatchSource> = {
  [sqs.eventSource]: sqs,
  [kinesis.eventSource]: kinesis,
  [dynamodbStreams.eventSource]: dynamodbStreams,
  [kafka.eventSource]: kafka
}

/**
 * The source of a batch event in `mode: 'auto'`: by its records' `eventSource`, else by the event
 * itself (Kafka's records carry none); an empty `Records` is an SQS batch with nothing to do.
 */
export const sourceOf = (event: unknown): BatchSource | undefined => {
  const records = recordsOf(event)
  const names = records?.map((r) => (r as { eventSource?: unknown } | null)?.eventSource) ?? []
  return Object.values(sources).find((source) => names.includes(source.eventSource)) ??
    Object.values(sources).find((source) => source.recognise?.(event) === true) ??
    (records?.length === 0 ? sqs : undefined)
}

/** The source a `mode` option names, if it names one. */
export const sourceByMode = (mode: string): BatchSource | undefined =>
  Object.values(sources).find((source) => source.mode === mode)
