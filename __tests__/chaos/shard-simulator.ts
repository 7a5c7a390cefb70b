import type { KinesisStreamRecord } from 'aws-lambda'
import { lambdaReads } from './lambda-answer.js'

/**
 * A Kinesis data stream with a Lambda event source mapping, as far as delivery semantics go
 * (https://docs.aws.amazon.com/lambda/latest/dg/with-kinesis.html): records are spread over
 * shards by partition key; each shard is read in sequence order from its checkpoint, one batch
 * in flight at a time (ParallelizationFactor 1). Time is whatever the caller says `now` is.
 *
 * What Lambda does with an invocation's outcome
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html):
 * - an answer with `batchItemFailures` checkpoints just before the LOWEST sequence number
 *   reported (every record before it is done) and reads again from there; none reported,
 *   or no `batchItemFailures` at all, or no answer object: the whole batch is done;
 * - an answer Lambda cannot read (`batchItemFailures` not a list, an identifier missing,
 *   empty or not in the batch), a function error, a crash, a timeout, or an answer that never
 *   arrives: the whole batch is retried from the checkpoint;
 * - a batch retried `maxRetryAttempts` times (`MaximumRetryAttempts`) and failing again goes to
 *   the on-failure destination, and the shard moves past it.
 * A retry is the same batch, from the checkpoint to the failed batch's end: records that arrived
 * meanwhile wait for the next read. A retry that made no progress counts as an attempt of the
 * batch; once the checkpoint moves, the rest starts with a clean count (AWS does not document
 * this detail; the choice keeps retries bounded and a shard always moving).
 */
export interface StreamOptions {
  shards: number
  /** Most records per batch (Kinesis allows up to 10,000). */
  batchSize: number
  maxRetryAttempts: number
  /** A failed batch is retried after this much, doubling with each attempt, up to `retryCapMs`. */
  retryBaseMs: number
  retryCapMs: number
}

export interface StreamRecord {
  sequenceNumber: string
  /** Put order over the whole stream. */
  index: number
  shard: number
  partitionKey: string
  /** Base64, as Kinesis delivers it. */
  data: string
  arrivedAt: number
  state: 'pending' | 'done' | 'dead-lettered'
}

interface Shard {
  id: string
  records: StreamRecord[]
  checkpoint: number
  inFlight: boolean
  attempts: number
  retryAt: number
  /** While a failed batch is retried: where it ends. */
  retryEnd?: number
}

/** One batch of one shard: what Lambda hands the function. */
export interface ShardBatch {
  shard: number
  records: KinesisStreamRecord[]
  /** Positions in the shard: records `[first, end)`. */
  first: number
  end: number
  receivedAt: number
}

const STREAM_ARN = 'arn:aws:kinesis:us-east-1:123456789012:stream/payments'
// Real sequence numbers are 56 digits; ours keep the width, so they also sort as strings.
const SEQUENCE_BASE = 49590338271490256608559692538361571095921575989136588898n

/** FNV-1a: which shard a partition key maps to (Kinesis hashes it with MD5 into a key range). */
const shardOf = (partitionKey: string, shards: number): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < partitionKey.length; i++) h = Math.imul(h ^ partitionKey.charCodeAt(i), 0x01000193)
  return (h >>> 0) % shards
}

export class KinesisStream {
  readonly options: StreamOptions
  readonly records: StreamRecord[] = []
  readonly deadLetters: StreamRecord[] = []
  /** Answers that reported failures, and answers Lambda could not read (the whole batch retried). */
  readonly answers = { partial: 0, unreadable: 0 }
  readonly #shards: Shard[]

  constructor (options: StreamOptions) {
    if (options.batchSize < 1 || options.batchSize > 10_000) throw new Error('a Kinesis event source mapping reads 1 to 10,000 records per batch')
    this.options = options
    this.#shards = Array.from({ length: options.shards }, (_, i) => ({ id: `shardId-${String(i).padStart(12, '0')}`, records: [], checkpoint: 0, inFlight: false, attempts: 0, retryAt: 0 }))
  }

  put (data: unknown, partitionKey: string, now: number): StreamRecord {
    const index = this.records.length + 1
    const shard = shardOf(partitionKey, this.options.shards)
    const record: StreamRecord = {
      sequenceNumber: String(SEQUENCE_BASE + BigInt(index) * 1000n),
      index,
      shard,
      partitionKey,
      data: Buffer.from(JSON.stringify(data)).toString('base64'),
      arrivedAt: now,
      state: 'pending'
    }
    this.records.push(record)
    ;(this.#shards[shard] as Shard).records.push(record)
    return record
  }

  /** One read of the event source mapping: the next batch of the first shard that has one ready. */
  receive (now: number): ShardBatch | undefined {
    for (const [index, shard] of this.#shards.entries()) {
      if (shard.inFlight || shard.retryAt > now) continue
      let end = shard.retryEnd ?? shard.checkpoint
      while (shard.retryEnd === undefined && end < shard.records.length && end - shard.checkpoint < this.options.batchSize && (shard.records[end] as StreamRecord).arrivedAt <= now) end++
      if (end === shard.checkpoint) continue
      shard.inFlight = true
      return { shard: index, first: shard.checkpoint, end, receivedAt: now, records: shard.records.slice(shard.checkpoint, end).map((r) => this.#deliver(shard, r)) }
    }
    return undefined
  }

  /** The function answered, and its answer reached Lambda, which reads it as JSON (lambda-answer.ts). */
  complete (batch: ShardBatch, response: unknown, now: number): void {
    const read = lambdaReads(response)
    if (!read.readable) return this.#unreadable(batch, now)
    const failures = (read.answer as { batchItemFailures?: unknown } | null)?.batchItemFailures
    if (failures === undefined || failures === null) return this.#advance(batch, batch.end, now)
    if (!Array.isArray(failures)) return this.#unreadable(batch, now)
    const shard = this.#shards[batch.shard] as Shard
    let lowest = batch.end
    for (const failure of failures) {
      const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier
      const at = typeof id === 'string' && id !== '' ? shard.records.findIndex((r, i) => i >= batch.first && i < batch.end && r.sequenceNumber === id) : -1
      if (at === -1) return this.#unreadable(batch, now)
      lowest = Math.min(lowest, at)
    }
    if (failures.length > 0) this.answers.partial++
    if (lowest === batch.first) return this.fail(batch, now)
    this.#advance(batch, lowest, now)
  }

  /** The invocation failed, crashed, timed out, or its answer never reached Lambda: the whole batch again, later. */
  fail (batch: ShardBatch, now: number): void {
    const shard = this.#shards[batch.shard] as Shard
    shard.inFlight = false
    shard.attempts++
    if (shard.attempts <= this.options.maxRetryAttempts) {
      shard.retryEnd = batch.end
      shard.retryAt = now + Math.min(this.options.retryCapMs, this.options.retryBaseMs * 2 ** (shard.attempts - 1))
      return
    }
    // Retries exhausted: the batch goes to the on-failure destination and the shard moves on.
    for (const record of shard.records.slice(batch.first, batch.end)) {
      record.state = 'dead-lettered'
      this.deadLetters.push(record)
    }
    shard.checkpoint = batch.end
    shard.attempts = 0
    shard.retryAt = now
    delete shard.retryEnd
  }

  /** Every record checkpointed past (done or dead-lettered), and no batch in flight. */
  drained (): boolean {
    return this.#shards.every((s) => !s.inFlight && s.checkpoint === s.records.length)
  }

  /** When a shard that is idle now next has a batch ready (undefined when none will without a put). */
  nextReadyAt (now: number): number | undefined {
    let next: number | undefined
    for (const shard of this.#shards) {
      const head = shard.records[shard.checkpoint]
      if (shard.inFlight || head === undefined) continue
      const at = Math.max(shard.retryAt, head.arrivedAt)
      if (at > now && (next === undefined || at < next)) next = at
    }
    return next
  }

  #unreadable (batch: ShardBatch, now: number): void {
    this.answers.unreadable++
    this.fail(batch, now)
  }

  #advance (batch: ShardBatch, to: number, now: number): void {
    const shard = this.#shards[batch.shard] as Shard
    for (const record of shard.records.slice(batch.first, to)) record.state = 'done'
    shard.checkpoint = to
    shard.inFlight = false
    shard.attempts = 0
    shard.retryAt = now
    // What is left of the batch is retried as it is; a batch done to its end, the next read.
    if (to < batch.end) shard.retryEnd = batch.end
    else delete shard.retryEnd
  }

  /** A fresh record object per delivery, shaped as Lambda delivers it. */
  #deliver (shard: Shard, r: StreamRecord): KinesisStreamRecord {
    return {
      kinesis: {
        kinesisSchemaVersion: '1.0',
        partitionKey: r.partitionKey,
        sequenceNumber: r.sequenceNumber,
        data: r.data,
        approximateArrivalTimestamp: r.arrivedAt / 1000
      },
      eventSource: 'aws:kinesis',
      eventVersion: '1.0',
      eventID: `${shard.id}:${r.sequenceNumber}`,
      eventName: 'aws:kinesis:record',
      invokeIdentityArn: 'arn:aws:iam::123456789012:role/payments-consumer',
      awsRegion: 'us-east-1',
      eventSourceARN: STREAM_ARN
    }
  }
}
