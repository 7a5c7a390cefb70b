import type { MSKEvent, MSKRecord } from 'aws-lambda'
import { lambdaReads } from './lambda-answer.js'

/**
 * Kafka topic-partitions with a Lambda event source mapping (Amazon MSK or self-managed), as far
 * as delivery semantics go (https://docs.aws.amazon.com/lambda/latest/dg/kafka-retry-configurations.html).
 * Records go to a partition by their key; each partition is read in offset order from its
 * committed offset, one batch in flight per partition. A batch holds the ready records of every
 * partition not in flight, up to `batchSize` in all, under `records["<topic>-<partition>"]`.
 * Time is whatever the caller says `now` is.
 *
 * What Lambda does with an invocation's outcome (`ReportBatchItemFailures` on):
 * - an answer with `batchItemFailures` (`{ itemIdentifier: { partition, offset } }`) commits each
 *   reported partition just before its LOWEST reported offset, and reads it again from there (the
 *   records after it are delivered again); a partition of the batch not reported is done to its
 *   end; none reported, or no answer object: the whole batch is done;
 * - an answer Lambda cannot read (JSON it has no text for, `batchItemFailures` not a list, an
 *   identifier not naming a record of the batch), a function error, a crash, a timeout, or an
 *   answer that never arrives: every partition of the batch is read again from its committed offset;
 * - Kafka counts no deliveries (a record carries no receive count). A partition read again without
 *   progress counts an attempt; past `maxRetryAttempts` (Lambda applies 10 when retries are
 *   infinite and an on-failure destination is set) its records of the batch go to the on-failure
 *   destination and the partition moves past them. Progress starts a clean count.
 * A partition read again waits its backoff, doubling per attempt (AWS documents none for Kafka;
 * the choice keeps retries bounded, as for the shard simulator), and is read as it then is: from
 * its committed offset, with records that arrived meanwhile.
 */
export interface KafkaOptions {
  topic: string
  partitions: number
  /** Most records per batch, over all its partitions (MSK allows up to 10,000). */
  batchSize: number
  maxRetryAttempts: number
  retryBaseMs: number
  retryCapMs: number
  /** `aws:kafka` (MSK: the cluster's ARN) or `SelfManagedKafka` (its bootstrap servers). */
  eventSource: 'aws:kafka' | 'SelfManagedKafka'
}

export interface LogRecord {
  topic: string
  partition: number
  offset: number
  /** Produce order over the whole topic. */
  index: number
  key: string
  /** Base64, as Lambda delivers it. */
  value: string
  arrivedAt: number
  state: 'pending' | 'done' | 'dead-lettered'
}

interface Partition { records: LogRecord[], committed: number, inFlight: boolean, attempts: number, retryAt: number }

/** The records `[first, end)` (positions in the partition) one batch holds of one partition. */
export interface PartitionSlice { partition: number, first: number, end: number }

/** One batch: what Lambda hands the function (`event`), and where its records came from. */
export interface KafkaBatch {
  event: MSKEvent
  /** The event's records in `Object.values(records).flat()` order. */
  records: MSKRecord[]
  slices: PartitionSlice[]
  receivedAt: number
}

const CLUSTER_ARN = 'arn:aws:kafka:us-east-1:123456789012:cluster/payments/0c4d2e6a-kafka-chaos-1'
const BOOTSTRAP_SERVERS = 'b-1.payments.kafka.us-east-1.amazonaws.com:9098,b-2.payments.kafka.us-east-1.amazonaws.com:9098'

/** FNV-1a: which partition a key goes to (Kafka's default partitioner hashes it with murmur2). */
const partitionOf = (key: string, partitions: number): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  return (h >>> 0) % partitions
}

export class KafkaTopic {
  readonly options: KafkaOptions
  readonly records: LogRecord[] = []
  readonly deadLetters: LogRecord[] = []
  /** Answers that reported failures, and answers Lambda could not read (the whole batch read again). */
  readonly answers = { partial: 0, unreadable: 0 }
  readonly #partitions: Partition[]
  /** Where the next read starts looking, so that no partition waits behind the others. */
  #cursor = 0

  constructor (options: KafkaOptions) {
    if (options.batchSize < 1 || options.batchSize > 10_000) throw new Error('a Kafka event source mapping reads 1 to 10,000 records per batch')
    this.options = options
    this.#partitions = Array.from({ length: options.partitions }, () => ({ records: [], committed: 0, inFlight: false, attempts: 0, retryAt: 0 }))
  }

  produce (value: unknown, key: string, now: number): LogRecord {
    const partition = partitionOf(key, this.options.partitions)
    const log = this.#partitions[partition] as Partition
    const record: LogRecord = {
      topic: this.options.topic,
      partition,
      offset: log.records.length,
      index: this.records.length + 1,
      key,
      value: Buffer.from(JSON.stringify(value)).toString('base64'),
      arrivedAt: now,
      state: 'pending'
    }
    this.records.push(record)
    log.records.push(record)
    return record
  }

  /** One poll of the event source mapping: the ready records of the partitions not in flight, as one event. */
  receive (now: number): KafkaBatch | undefined {
    const slices: PartitionSlice[] = []
    let taken = 0
    for (let i = 0; i < this.#partitions.length && taken < this.options.batchSize; i++) {
      const index = (this.#cursor + i) % this.#partitions.length
      const p = this.#partitions[index] as Partition
      if (p.inFlight || p.retryAt > now) continue
      let end = p.committed
      while (end < p.records.length && taken < this.options.batchSize && (p.records[end] as LogRecord).arrivedAt <= now) { end++; taken++ }
      if (end > p.committed) slices.push({ partition: index, first: p.committed, end })
    }
    if (slices.length === 0) return undefined
    this.#cursor = (this.#cursor + 1) % this.#partitions.length
    const grouped: Record<string, MSKRecord[]> = {}
    for (const slice of slices) {
      const p = this.#partitions[slice.partition] as Partition
      p.inFlight = true
      grouped[`${this.options.topic}-${slice.partition}`] = p.records.slice(slice.first, slice.end).map((r) => this.#deliver(r))
    }
    const event = this.options.eventSource === 'aws:kafka'
      ? { eventSource: 'aws:kafka' as const, eventSourceArn: CLUSTER_ARN, bootstrapServers: BOOTSTRAP_SERVERS, records: grouped }
      : { eventSource: 'SelfManagedKafka', bootstrapServers: BOOTSTRAP_SERVERS, records: grouped } as unknown as MSKEvent
    return { event, records: Object.values(grouped).flat(), slices, receivedAt: now }
  }

  /** The function answered, and its answer reached Lambda, which reads it as JSON (lambda-answer.ts). */
  complete (batch: KafkaBatch, response: unknown, now: number): void {
    const read = lambdaReads(response)
    if (!read.readable) return this.#unreadable(batch, now)
    const failures = (read.answer as { batchItemFailures?: unknown } | null)?.batchItemFailures
    if (failures !== undefined && failures !== null && !Array.isArray(failures)) return this.#unreadable(batch, now)
    const lowest = new Map<number, number>()
    for (const failure of (failures ?? []) as unknown[]) {
      const at = this.#find(batch, (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier)
      if (at === undefined) return this.#unreadable(batch, now)
      lowest.set(at.partition, Math.min(lowest.get(at.partition) ?? Infinity, at.position))
    }
    if (lowest.size > 0) this.answers.partial++
    for (const slice of batch.slices) {
      const to = lowest.get(slice.partition) ?? slice.end
      if (to === slice.first) this.#retry(slice, now)
      else this.#advance(slice, to, now)
    }
  }

  /** The invocation failed, crashed, timed out, or its answer never reached Lambda: each partition of the batch again, later. */
  fail (batch: KafkaBatch, now: number): void {
    for (const slice of batch.slices) this.#retry(slice, now)
  }

  /** Every record committed past (done or dead-lettered), and no batch in flight. */
  drained (): boolean {
    return this.#partitions.every((p) => !p.inFlight && p.committed === p.records.length)
  }

  /** When a partition that is idle now next has records ready (undefined when none will without a produce). */
  nextReadyAt (now: number): number | undefined {
    let next: number | undefined
    for (const p of this.#partitions) {
      const head = p.records[p.committed]
      if (p.inFlight || head === undefined) continue
      const at = Math.max(p.retryAt, head.arrivedAt)
      if (at > now && (next === undefined || at < next)) next = at
    }
    return next
  }

  /** The record of the batch an `itemIdentifier` names: `{ partition: "<topic>-<partition>", offset }`, as Lambda reads it. */
  #find (batch: KafkaBatch, id: unknown): { partition: number, position: number } | undefined {
    const { partition, offset } = (id ?? {}) as { partition?: unknown, offset?: unknown }
    if (typeof partition !== 'string' || typeof offset !== 'number') return undefined
    for (const slice of batch.slices) {
      if (partition !== `${this.options.topic}-${slice.partition}`) continue
      const position = (this.#partitions[slice.partition] as Partition).records.findIndex((r, i) => i >= slice.first && i < slice.end && r.offset === offset)
      return position === -1 ? undefined : { partition: slice.partition, position }
    }
    return undefined
  }

  #unreadable (batch: KafkaBatch, now: number): void {
    this.answers.unreadable++
    this.fail(batch, now)
  }

  #retry (slice: PartitionSlice, now: number): void {
    const p = this.#partitions[slice.partition] as Partition
    p.inFlight = false
    p.attempts++
    if (p.attempts <= this.options.maxRetryAttempts) {
      p.retryAt = now + Math.min(this.options.retryCapMs, this.options.retryBaseMs * 2 ** (p.attempts - 1))
      return
    }
    // Retries exhausted: the batch's records of this partition go to the on-failure destination.
    for (const record of p.records.slice(slice.first, slice.end)) {
      record.state = 'dead-lettered'
      this.deadLetters.push(record)
    }
    p.committed = slice.end
    p.attempts = 0
    p.retryAt = now
  }

  #advance (slice: PartitionSlice, to: number, now: number): void {
    const p = this.#partitions[slice.partition] as Partition
    for (const record of p.records.slice(slice.first, to)) record.state = 'done'
    p.committed = to
    p.inFlight = false
    p.attempts = 0
    p.retryAt = now
  }

  /** A fresh record object per delivery, shaped as Lambda delivers it. */
  #deliver (r: LogRecord): MSKRecord {
    return {
      topic: r.topic,
      partition: r.partition,
      offset: r.offset,
      timestamp: r.arrivedAt,
      timestampType: 'CREATE_TIME',
      key: Buffer.from(r.key).toString('base64'),
      value: r.value,
      headers: []
    }
  }
}
