import { describe, expect, test } from '@jest/globals'
import { KinesisStream, type ShardBatch, type StreamOptions } from './shard-simulator.js'

/** The shard simulator is the stream runs' ground truth: its checkpoint rules are checked on their own. */
const stream = (options: Partial<StreamOptions> = {}) => new KinesisStream({
  shards: 1, batchSize: 10, maxRetryAttempts: 2, retryBaseMs: 1000, retryCapMs: 60_000, ...options
})

const received = (s: KinesisStream, now: number): ShardBatch => {
  const batch = s.receive(now)
  if (batch === undefined) throw new Error(`nothing to read at ${now}`)
  return batch
}
const sequences = (batch: ShardBatch): string[] => batch.records.map((r) => r.kinesis.sequenceNumber)
const failure = (sequenceNumber: string | undefined) => ({ itemIdentifier: sequenceNumber })

describe('Kinesis shard simulator', () => {
  test('a batch is read in sequence order from the checkpoint, one batch in flight per shard', () => {
    const s = stream({ batchSize: 2 })
    const [a, b, c] = [s.put({ n: 1 }, 'k', 0), s.put({ n: 2 }, 'k', 0), s.put({ n: 3 }, 'k', 0)]
    const first = received(s, 0)
    expect(sequences(first)).toEqual([a.sequenceNumber, b.sequenceNumber])
    expect(BigInt(a.sequenceNumber) < BigInt(b.sequenceNumber)).toBe(true)
    expect(s.receive(0)).toBeUndefined()
    s.complete(first, { batchItemFailures: [] }, 0)
    expect([a.state, b.state]).toEqual(['done', 'done'])
    expect(sequences(received(s, 0))).toEqual([c.sequenceNumber])
  })

  test('batchItemFailures checkpoint just before the lowest sequence number reported; the rest of the batch is retried as it was', () => {
    const s = stream()
    const [a, b, c, d] = [1, 2, 3, 4].map((n) => s.put({ n }, `k${n}`, 0))
    const batch = received(s, 0)
    s.complete(batch, { batchItemFailures: [failure(d?.sequenceNumber), failure(b?.sequenceNumber)] }, 0)
    expect([a?.state, b?.state, c?.state, d?.state]).toEqual(['done', 'pending', 'pending', 'pending'])
    s.put({ n: 5 }, 'k5', 0)
    expect(sequences(received(s, 0))).toEqual([b?.sequenceNumber, c?.sequenceNumber, d?.sequenceNumber])
  })

  test('no answer object, or no batchItemFailures, is a success; an identifier not in the batch fails the whole batch', () => {
    const s = stream()
    s.put({ n: 1 }, 'k', 0)
    s.complete(received(s, 0), null, 0)
    expect(s.drained()).toBe(true)
    const m = s.put({ n: 2 }, 'k', 0)
    s.complete(received(s, 0), { batchItemFailures: [failure('12345')] }, 0)
    expect(m.state).toBe('pending')
    expect(s.receive(0)).toBeUndefined()
    expect(s.nextReadyAt(0)).toBe(1000)
  })

  test('the answer is read as the JSON Lambda receives: what a toJSON writes counts, what JSON leaves out does not', () => {
    const s = stream()
    const [a, b] = [s.put({ n: 1 }, 'k', 0), s.put({ n: 2 }, 'k', 0)]
    s.complete(received(s, 0), { toJSON: () => ({ batchItemFailures: [failure(b.sequenceNumber)] }) }, 0)
    expect([a.state, b.state]).toEqual(['done', 'pending'])
    expect(s.answers).toEqual({ partial: 1, unreadable: 0 })
    s.complete(received(s, 0), Object.defineProperty([], 'batchItemFailures', { value: [failure(b.sequenceNumber)], enumerable: false }), 0)
    expect(b.state).toBe('done')
  })

  test('an answer JSON has no text for is a function error: the whole batch is retried', () => {
    const s = stream()
    const a = s.put({ n: 1 }, 'k', 0)
    s.complete(received(s, 0), { batchItemFailures: [], total: 1n }, 0)
    expect(a.state).toBe('pending')
    expect(s.nextReadyAt(0)).toBe(1000)
    expect(s.answers).toEqual({ partial: 0, unreadable: 1 })
  })

  test('a failed batch is retried with backoff, then goes to the on-failure destination and the shard moves on', () => {
    const s = stream({ maxRetryAttempts: 2 })
    const [a, b] = [s.put({ n: 1 }, 'k', 0), s.put({ n: 2 }, 'k', 0)]
    s.fail(received(s, 0), 0)
    expect(s.receive(999)).toBeUndefined()
    s.complete(received(s, 1000), { batchItemFailures: [failure(a.sequenceNumber)] }, 1000)
    expect(s.nextReadyAt(1000)).toBe(3000)
    s.fail(received(s, 3000), 3000)
    expect([a.state, b.state]).toEqual(['dead-lettered', 'dead-lettered'])
    expect(s.deadLetters).toEqual([a, b])
    expect(s.drained()).toBe(true)
  })

  test('records spread over shards by partition key, each shard read on its own', () => {
    const s = stream({ shards: 3 })
    for (let i = 0; i < 30; i++) s.put({ i }, `key-${i % 6}`, 0)
    const batches = [s.receive(0), s.receive(0), s.receive(0), s.receive(0)].filter((b) => b !== undefined)
    const keysByShard = batches.map((b) => new Set(b.records.map((r) => r.kinesis.partitionKey)))
    expect(keysByShard.flatMap((keys) => [...keys]).sort()).toEqual(['key-0', 'key-1', 'key-2', 'key-3', 'key-4', 'key-5'])
    expect(new Set(batches.map((b) => b.shard)).size).toBe(batches.length)
  })
})
