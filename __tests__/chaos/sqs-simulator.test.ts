import { describe, expect, test } from '@jest/globals'
import { prng } from './prng.js'
import { SqsQueue, type Delivery, type QueueOptions } from './sqs-simulator.js'

/** The simulator is the suite's ground truth: its delivery rules are checked on their own. */
const queue = (options: Partial<QueueOptions> = {}) => new SqsQueue({
  fifo: false, visibilityTimeoutMs: 30_000, maxReceiveCount: 3, batchSize: 10, random: prng(1), ...options
})

const received = (q: SqsQueue, now: number): Delivery => {
  const delivery = q.receive(now)
  if (delivery === undefined) throw new Error(`nothing to receive at ${now}`)
  return delivery
}
const ids = (records: Array<{ messageId: string }> | undefined): string[] => (records ?? []).map((r) => r.messageId)

describe('SQS simulator', () => {
  test('a received message is invisible until its visibility timeout, then comes back with one more receive', () => {
    const q = queue()
    const m = q.send({ paymentId: 'p1' }, 0)
    const first = q.receive(0)
    expect(ids(first?.records)).toEqual([m.messageId])
    expect(first?.records[0]?.attributes.ApproximateReceiveCount).toBe('1')
    expect(q.receive(29_999)).toBeUndefined()
    const again = q.receive(30_000)
    expect(again?.records[0]?.attributes.ApproximateReceiveCount).toBe('2')
    expect(again?.records[0]?.receiptHandle).not.toBe(first?.records[0]?.receiptHandle)
  })

  test('batchItemFailures delete every other record; a lost answer deletes nothing', () => {
    const q = queue()
    const [a, b] = [q.send({ n: 1 }, 0), q.send({ n: 2 }, 0)]
    const delivery = q.receive(0)
    if (delivery === undefined) throw new Error('nothing delivered')
    q.settle(delivery, { batchItemFailures: [{ itemIdentifier: b.messageId }] })
    expect(a.state).toBe('deleted')
    expect(b.state).toBe('available')
    expect(q.answers).toEqual({ partial: 1, unreadable: 0 })
    const redelivery = q.receive(30_000)
    if (redelivery === undefined) throw new Error('nothing redelivered')
    q.fail(redelivery)
    expect(b.state).toBe('available')
    expect(ids(q.receive(60_000)?.records)).toEqual([b.messageId])
  })

  test('the answer is read as the JSON Lambda receives: what a toJSON writes counts, what JSON leaves out does not, and no answer at all deletes every record', () => {
    const q = queue()
    const [a, b] = [q.send({ n: 1 }, 0), q.send({ n: 2 }, 0)]
    q.settle(received(q, 0), { toJSON: () => ({ batchItemFailures: [{ itemIdentifier: b.messageId }] }) })
    expect([a.state, b.state]).toEqual(['deleted', 'available'])
    // Failures kept where JSON does not look (a non-enumerable property) are not seen: all succeeded.
    const c = q.send({ n: 3 }, 30_000)
    q.settle(received(q, 30_000), Object.defineProperty({}, 'batchItemFailures', { value: [{ itemIdentifier: c.messageId }], enumerable: false }))
    expect([b.state, c.state]).toEqual(['deleted', 'deleted'])
    const d = q.send({ n: 4 }, 30_000)
    q.settle(received(q, 30_000), undefined)
    expect(d.state).toBe('deleted')
  })

  test('an answer JSON has no text for is a function error: nothing is deleted', () => {
    const q = queue()
    const m = q.send({ n: 1 }, 0)
    q.settle(received(q, 0), { batchItemFailures: [], total: 1n })
    expect(m.state).toBe('available')
    expect(q.answers).toEqual({ partial: 0, unreadable: 1 })
  })

  test('a stale receipt handle deletes nothing', () => {
    const q = queue()
    const m = q.send({ n: 1 }, 0)
    const old = q.receive(0)
    q.receive(30_000)
    if (old === undefined) throw new Error('nothing delivered')
    q.settle(old, { batchItemFailures: [] })
    expect(m.state).toBe('available')
  })

  test('a message received maxReceiveCount times goes to the DLQ on its next receive', () => {
    const q = queue({ maxReceiveCount: 2 })
    const m = q.send({ n: 1 }, 0)
    q.receive(0)
    q.receive(30_000)
    expect(q.receive(60_000)).toBeUndefined()
    expect(m.state).toBe('dead-lettered')
    expect(q.deadLetters).toEqual([m])
    expect(q.drained()).toBe(true)
  })

  test('FIFO: a group is delivered in order and not again while any of its messages is in flight', () => {
    const q = queue({ fifo: true, batchSize: 2 })
    const [a1, a2, a3] = [q.send({ n: 1 }, 0, 'a'), q.send({ n: 2 }, 0, 'a'), q.send({ n: 3 }, 0, 'a')]
    const b1 = q.send({ n: 4 }, 0, 'b')
    const first = q.receive(0)
    const second = q.receive(0)
    const batches = [ids(first?.records), ids(second?.records)]
    expect(batches).toContainEqual([a1.messageId, a2.messageId])
    expect(batches).toContainEqual([b1.messageId])
    expect(q.receive(0)).toBeUndefined()
    const aBatch = ids(first?.records)[0] === a1.messageId ? first : second
    if (aBatch === undefined) throw new Error('group a not delivered')
    q.settle(aBatch, { batchItemFailures: [] })
    expect(ids(q.receive(0)?.records)).toEqual([a3.messageId])
  })

  test('batch sizes are bounded as AWS bounds them', () => {
    expect(() => queue({ fifo: true, batchSize: 11 })).toThrow(/at most 10/)
    expect(() => queue({ batchSize: 10_001 })).toThrow(/at most 10,000/)
  })
})
