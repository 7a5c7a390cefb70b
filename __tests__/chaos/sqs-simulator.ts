import type { SQSRecord } from 'aws-lambda'
import { lambdaReads } from './lambda-answer.js'
import type { Random } from './prng.js'

/**
 * An SQS queue with a Lambda event source mapping, as far as delivery semantics go:
 * visibility timeout, ApproximateReceiveCount, redrive to a DLQ after maxReceiveCount,
 * partial batch responses, FIFO message groups. Time is whatever the caller says `now` is.
 *
 * What Lambda does with an invocation's outcome (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html):
 * a `{ batchItemFailures }` response deletes every other record of the batch; a failed
 * invocation (or a response that never arrives) deletes nothing, and the whole batch
 * becomes visible again when its visibility timeout runs out.
 */
export interface QueueOptions {
  fifo: boolean
  visibilityTimeoutMs: number
  /** Redrive policy: a message received this many times goes to the DLQ on its next receive. */
  maxReceiveCount: number
  /** Most records per batch: up to 10,000 on a standard queue, 10 on a FIFO queue. */
  batchSize: number
  /** Standard queues deliver in no particular order; this decides which. */
  random: Random
}

export interface QueuedMessage {
  messageId: string
  body: string
  groupId?: string
  /** Send order, over the whole queue. */
  sequence: number
  sentAt: number
  receiveCount: number
  /** The message is in flight until then (once received). */
  visibleAt: number
  /** Only the latest receipt handle deletes the message. */
  receiptHandle?: string
  state: 'available' | 'deleted' | 'dead-lettered'
}

/** One delivered batch: what Lambda hands the function. */
export interface Delivery {
  records: SQSRecord[]
  receivedAt: number
}

export class SqsQueue {
  readonly options: QueueOptions
  readonly messages: QueuedMessage[] = []
  readonly deadLetters: QueuedMessage[] = []
  readonly arn: string
  /** Answers that reported failures, and answers Lambda could not read (the whole batch failed). */
  readonly answers = { partial: 0, unreadable: 0 }
  #receipts = 0

  constructor (options: QueueOptions) {
    if (options.fifo && options.batchSize > 10) throw new Error('a FIFO queue delivers at most 10 records per batch')
    if (!options.fifo && options.batchSize > 10_000) throw new Error('a standard queue delivers at most 10,000 records per batch')
    this.options = options
    this.arn = `arn:aws:sqs:us-east-1:123456789012:payments${options.fifo ? '.fifo' : ''}`
  }

  send (body: unknown, now: number, groupId?: string): QueuedMessage {
    if (this.options.fifo && groupId === undefined) throw new Error('a FIFO queue needs a MessageGroupId')
    const sequence = this.messages.length + 1
    const message: QueuedMessage = {
      messageId: `m-${String(sequence).padStart(6, '0')}`,
      body: JSON.stringify(body),
      ...(groupId === undefined ? {} : { groupId }),
      sequence,
      sentAt: now,
      receiveCount: 0,
      visibleAt: now,
      state: 'available'
    }
    this.messages.push(message)
    return message
  }

  /** One poll of the event source mapping: up to `batchSize` visible messages, now in flight. */
  receive (now: number): Delivery | undefined {
    const chosen = this.options.fifo ? this.#chooseFifo(now) : this.#chooseStandard(now)
    if (chosen.length === 0) return undefined
    return { records: chosen.map((m) => this.#deliver(m, now)), receivedAt: now }
  }

  /**
   * What Lambda does with the function's answer, read as the JSON it receives (lambda-answer.ts):
   * no answer, or no `batchItemFailures`, deletes every record; a list deletes every record not
   * in it; anything else (not a list, an identifier not in the batch, an answer JSON cannot
   * write) is a failed invocation, and deletes nothing.
   */
  settle (delivery: Delivery, response: unknown): void {
    const read = lambdaReads(response)
    if (!read.readable) return this.#unreadable()
    const failures = (read.answer as { batchItemFailures?: unknown } | null)?.batchItemFailures
    if (failures !== undefined && failures !== null && !Array.isArray(failures)) return this.#unreadable()
    const failed = new Set((failures ?? []).map((f: unknown) => (f as { itemIdentifier?: unknown } | null)?.itemIdentifier))
    // An identifier that is not in the batch makes Lambda treat the whole batch as failed.
    if ([...failed].some((id) => !delivery.records.some((r) => r.messageId === id))) return this.#unreadable()
    if (failed.size > 0) this.answers.partial++
    const byId = new Map(this.messages.map((m) => [m.messageId, m]))
    for (const record of delivery.records) {
      if (failed.has(record.messageId)) continue
      const message = byId.get(record.messageId)
      if (message?.state === 'available' && message.receiptHandle === record.receiptHandle) message.state = 'deleted'
    }
  }

  /** The invocation failed, or its answer never arrived: nothing is deleted, the batch comes back when its visibility times out. */
  fail (_delivery: Delivery): void {}

  /** Every message either deleted or dead-lettered. */
  drained (): boolean {
    return this.messages.every((m) => m.state !== 'available')
  }

  /** When the next in-flight message becomes visible again (undefined when none is in flight). */
  nextVisibleAt (now: number): number | undefined {
    let next: number | undefined
    for (const m of this.messages) {
      if (m.state === 'available' && m.visibleAt > now && (next === undefined || m.visibleAt < next)) next = m.visibleAt
    }
    return next
  }

  hasVisible (now: number): boolean {
    return this.messages.some((m) => this.#visible(m, now))
  }

  #unreadable (): void {
    this.answers.unreadable++
  }

  #visible (m: QueuedMessage, now: number): boolean {
    return m.state === 'available' && m.visibleAt <= now
  }

  /** SQS moves a message to the DLQ when a receive would exceed maxReceiveCount. */
  #redriven (m: QueuedMessage): boolean {
    if (m.receiveCount < this.options.maxReceiveCount) return false
    m.state = 'dead-lettered'
    this.deadLetters.push(m)
    return true
  }

  #chooseStandard (now: number): QueuedMessage[] {
    const chosen: QueuedMessage[] = []
    for (const m of this.options.random.shuffle(this.messages.filter((x) => this.#visible(x, now)))) {
      if (chosen.length >= this.options.batchSize) break
      if (!this.#redriven(m)) chosen.push(m)
    }
    return chosen
  }

  /**
   * FIFO: a group whose messages are in flight is not delivered; otherwise its messages
   * come from the head of the group, in send order. Several groups may share a batch.
   */
  #chooseFifo (now: number): QueuedMessage[] {
    const groups = new Map<string, QueuedMessage[]>()
    for (const m of this.messages) {
      if (m.state !== 'available') continue
      const group = m.groupId as string
      groups.set(group, [...(groups.get(group) ?? []), m])
    }
    const chosen: QueuedMessage[] = []
    for (const [, members] of this.options.random.shuffle([...groups])) {
      if (members.some((m) => m.visibleAt > now)) continue
      for (const m of members) {
        if (chosen.length >= this.options.batchSize) return chosen
        if (!this.#redriven(m)) chosen.push(m)
      }
    }
    return chosen
  }

  #deliver (m: QueuedMessage, now: number): SQSRecord {
    m.receiveCount++
    m.visibleAt = now + this.options.visibilityTimeoutMs
    m.receiptHandle = `rh-${m.messageId}-${++this.#receipts}`
    return {
      messageId: m.messageId,
      receiptHandle: m.receiptHandle,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'AIDACHAOS',
        ApproximateFirstReceiveTimestamp: String(now),
        ...(m.groupId === undefined ? {} : { MessageGroupId: m.groupId, MessageDeduplicationId: m.messageId, SequenceNumber: String(m.sequence) })
      },
      messageAttributes: {},
      md5OfBody: 'md5',
      eventSource: 'aws:sqs',
      eventSourceARN: this.arn,
      awsRegion: 'us-east-1'
    }
  }
}
