import { describe, expect, test } from '@jest/globals'
import { KafkaTopic, type KafkaBatch, type KafkaOptions, type LogRecord } from './kafka-simulator.js'

/** The Kafka simulator is the Kafka runs' ground truth: its commit rules are checked on their own. */
const topic = (options: Partial<KafkaOptions> = {}) => new KafkaTopic({
  topic: 'payments', partitions: 1, batchSize: 10, maxRetryAttempts: 2, retryBaseMs: 1000, retryCapMs: 60_000, eventSource: 'aws:kafka', ...options
})

const received = (t: KafkaTopic, now: number): KafkaBatch => {
  const batch = t.receive(now)
  if (batch === undefined) throw new Error(`nothing to read at ${now}`)
  return batch
}
const offsets = (batch: KafkaBatch): string[] => batch.records.map((r) => `${r.topic}-${r.partition}@${r.offset}`)
const failure = (r: LogRecord | undefined) => ({ itemIdentifier: { partition: `${r?.topic}-${r?.partition}`, offset: r?.offset } })
/** Keys that the partitioner sends to partitions 0 and 1 of two. */
const keysOf = (t: KafkaTopic): [string, string] => {
  const probe = new KafkaTopic({ ...t.options })
  const keys = Array.from({ length: 20 }, (_, i) => `account-${i}`)
  const on = (p: number): string => keys.find((k) => probe.produce({}, k, 0).partition === p) as string
  return [on(0), on(1)]
}

describe('Kafka simulator', () => {
  test('an event holds each partition under "<topic>-<partition>", in offset order from the committed offset, one batch in flight per partition', () => {
    const t = topic({ batchSize: 2 })
    const [a, b, c] = [t.produce({ n: 1 }, 'k', 0), t.produce({ n: 2 }, 'k', 0), t.produce({ n: 3 }, 'k', 0)]
    const first = received(t, 0)
    expect(Object.keys(first.event.records)).toEqual(['payments-0'])
    expect(first.event).toMatchObject({ eventSource: 'aws:kafka', eventSourceArn: expect.stringMatching(/^arn:aws:kafka:/) })
    expect(offsets(first)).toEqual(['payments-0@0', 'payments-0@1'])
    expect(JSON.parse(Buffer.from(first.records[0]?.value ?? '', 'base64').toString())).toEqual({ n: 1 })
    expect(t.receive(0)).toBeUndefined()
    t.complete(first, { batchItemFailures: [] }, 0)
    expect([a.state, b.state, c.state]).toEqual(['done', 'done', 'pending'])
    expect(offsets(received(t, 0))).toEqual(['payments-0@2'])
  })

  test('a reported partition resumes from its lowest reported offset, the records after it delivered again; an unreported partition is done', () => {
    const t = topic({ partitions: 2 })
    const [k0, k1] = keysOf(t)
    const [a, b, c, d] = [t.produce({ n: 1 }, k0, 0), t.produce({ n: 2 }, k0, 0), t.produce({ n: 3 }, k0, 0), t.produce({ n: 4 }, k0, 0)]
    const x = t.produce({ n: 5 }, k1, 0)
    const batch = received(t, 0)
    expect(Object.keys(batch.event.records).sort()).toEqual(['payments-0', 'payments-1'])
    t.complete(batch, { batchItemFailures: [failure(d), failure(b)] }, 0)
    expect([a.state, b.state, c.state, d.state, x.state]).toEqual(['done', 'pending', 'pending', 'pending', 'done'])
    expect(t.answers).toEqual({ partial: 1, unreadable: 0 })
    const e = t.produce({ n: 6 }, k0, 0)
    expect(offsets(received(t, 0))).toEqual([b, c, d, e].map((r) => `payments-0@${r.offset}`))
  })

  test('an identifier Lambda cannot match (a string, an offset as text, another partition\'s offset) fails the whole batch; no answer at all is a success', () => {
    const t = topic({ partitions: 2 })
    const [k0, k1] = keysOf(t)
    const [a, x] = [t.produce({ n: 1 }, k0, 0), t.produce({ n: 2 }, k1, 0)]
    t.complete(received(t, 0), { batchItemFailures: [{ itemIdentifier: `payments-0@${a.offset}` }] }, 0)
    t.complete(received(t, 1000), { batchItemFailures: [{ itemIdentifier: { partition: 'payments-0', offset: String(a.offset) } }] }, 1000)
    expect(t.receive(1000)).toBeUndefined()
    t.complete(received(t, 3000), { batchItemFailures: [{ itemIdentifier: { partition: 'payments-1', offset: a.offset + 7 } }] }, 3000)
    expect([a.state, x.state]).toEqual(['dead-lettered', 'dead-lettered'])
    expect(t.answers).toEqual({ partial: 0, unreadable: 3 })
    const y = t.produce({ n: 3 }, k1, 3000)
    t.complete(received(t, 3000), undefined, 3000)
    expect(y.state).toBe('done')
    expect(t.drained()).toBe(true)
  })

  test('the answer is read as the JSON Lambda receives: what a toJSON writes counts, an answer JSON has no text for fails the batch', () => {
    const t = topic()
    const [a, b] = [t.produce({ n: 1 }, 'k', 0), t.produce({ n: 2 }, 'k', 0)]
    t.complete(received(t, 0), { toJSON: () => ({ batchItemFailures: [failure(b)] }) }, 0)
    expect([a.state, b.state]).toEqual(['done', 'pending'])
    t.complete(received(t, 0), { batchItemFailures: [], total: 1n }, 0)
    expect(b.state).toBe('pending')
    expect(t.nextReadyAt(0)).toBe(1000)
    expect(t.answers).toEqual({ partial: 1, unreadable: 1 })
  })

  test('a partition read again without progress is retried with backoff, then its records go to the on-failure destination and it moves on', () => {
    const t = topic({ maxRetryAttempts: 2 })
    const [a, b] = [t.produce({ n: 1 }, 'k', 0), t.produce({ n: 2 }, 'k', 0)]
    t.fail(received(t, 0), 0)
    expect(t.receive(999)).toBeUndefined()
    t.complete(received(t, 1000), { batchItemFailures: [failure(a)] }, 1000)
    expect(t.nextReadyAt(1000)).toBe(3000)
    // Read again from the committed offset, with what arrived meanwhile.
    const c = t.produce({ n: 3 }, 'k', 2000)
    const last = received(t, 3000)
    expect(offsets(last)).toEqual([a, b, c].map((r) => `payments-0@${r.offset}`))
    t.fail(last, 3000)
    expect([a.state, b.state, c.state]).toEqual(['dead-lettered', 'dead-lettered', 'dead-lettered'])
    expect(t.deadLetters).toEqual([a, b, c])
    expect(t.drained()).toBe(true)
  })

  test('a self-managed cluster names its bootstrap servers, no ARN; a batch never holds more than batchSize records', () => {
    const t = topic({ partitions: 3, batchSize: 4, eventSource: 'SelfManagedKafka' })
    for (let i = 0; i < 12; i++) t.produce({ i }, `key-${i % 6}`, 0)
    const batch = received(t, 0)
    expect(batch.event.eventSource).toBe('SelfManagedKafka')
    expect(batch.event).not.toHaveProperty('eventSourceArn')
    expect(batch.event.bootstrapServers).toEqual(expect.any(String))
    expect(batch.records).toHaveLength(4)
    expect(() => topic({ batchSize: 10_001 })).toThrow(/1 to 10,000/)
  })
})
