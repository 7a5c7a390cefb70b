import { describe, expect, jest, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import {
  idempotency,
  IdempotencyConfigError,
  IdempotencyError,
  IdempotencyInProgressError,
  IdempotencyStoreError,
  MemoryStore,
  type OutcomeReport
} from '../../../src/index.js'
import { storedKey } from '../../../src/keys/selector.js'
import { allSettledConsumer as consumer, CountingStore, waitUntil } from '../../support/memory-stores.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

describe('SQS batch with MemoryStore', () => {
  test('a new record costs one claim and one completion, nothing else', async () => {
    const store = new CountingStore()
    await consumer(store, async () => 'ok').invoke([sqsRecord('a')])
    expect(store.calls).toEqual(['claim', 'complete'])
  })

  test('with a local cache, a redelivery to a warm container costs no request', async () => {
    const store = new CountingStore()
    const handler = middy<SQSEvent>()
      .use(idempotency({ store, namespace: 'unit', localCacheSize: 10, logger: false }))
      .handler(async (e) => await Promise.allSettled(e.Records.map(async () => ({ paid: true }))))
    const record = sqsRecord('a')
    await handler(sqsEvent([record]), lambdaContext())
    store.calls = []
    expect(await handler(sqsEvent([redelivered(record), sqsRecord('fresh')]), lambdaContext())).toEqual([
      { status: 'fulfilled', value: { paid: true } }, { status: 'fulfilled', value: { paid: true } }
    ])
    expect(store.calls).toEqual(['claim', 'complete'])
  })

  test('store requests in flight never exceed the maxStoreRequests option', async () => {
    const store = new CountingStore()
    await consumer(store, async () => 'ok', { maxStoreRequests: 4 }).invoke(Array.from({ length: 50 }, (_, i) => sqsRecord(i)))
    expect(store.maxInFlight).toBe(4)
    expect(store.records()).toHaveLength(50)
  })

  test("a store's own bound that is no positive integer is not taken: the default bounds its requests", async () => {
    for (const bound of [0, -1, Number.NaN, 0.5]) {
      const store = new CountingStore({ limits: { maxResponseBytes: 1024, maxReadKeys: 100, maxStoreRequests: bound } })
      expect(failedIds(await consumer(store, async () => 'ok').invoke(Array.from({ length: 60 }, (_, i) => sqsRecord(i)))))
        .toEqual([])
      expect(store.records()).toHaveLength(60)
      expect(store.maxInFlight).toBe(50)
    }
  })

  test('a remaining time of 0 is a lease that has already lapsed, not "no context"', async () => {
    const store = new MemoryStore()
    let now = Date.UTC(2030, 0, 1)
    let release!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    // timeoutEarlyInMillis 0: with no time left, Middy's early timeout would fire first.
    const staleOutcomes: OutcomeReport[] = []
    const stale = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
      .use(idempotency({ store, namespace: 'unit', now: () => now, logger: false, onOutcome: (o) => { staleOutcomes.push(o) } }))
      .handler(async (e) => await Promise.allSettled(e.Records.map(async () => { await gate; return 'stale' })))
    const record = sqsRecord('a')
    const running = stale(sqsEvent([record]), lambdaContext(0))
    await waitUntil(() => store.records().length === 1)
    expect(store.records()[0]?.inProgressExpiry).toBe(now)
    // One millisecond later the lease has lapsed: another invocation may take over at once.
    now += 1
    const fresh = consumer(store, async () => 'fresh', { now: () => now })
    expect(await fresh.invoke([redelivered(record)])).toEqual({ batchItemFailures: [] })
    release()
    await running
    // The stale owner finished last but could not overwrite the new owner's record, and says so.
    expect(store.records()).toEqual([expect.objectContaining({ status: 'COMPLETED', responseData: '"fresh"' })])
    expect(staleOutcomes.map((o) => o.kind)).toEqual(['lease-lost'])
  })

  test('without a Lambda context the lease is the longest a Lambda can run (15 minutes)', async () => {
    const store = new MemoryStore()
    const handler = middy<SQSEvent>().use(idempotency({ store, logger: false, now: () => 1_000_000 })).handler(async (e) => { expect(store.records()[0]?.inProgressExpiry).toBe(1_000_000 + 900_000); return await Promise.allSettled(e.Records.map(async () => 1)) })
    await handler(sqsEvent([sqsRecord('a')]), {} as never)
    expect.assertions(1)
  })

  test('two functions sharing a table never collide (namespace)', async () => {
    const store = new MemoryStore()
    const record = sqsRecord('same message')
    const a = consumer(store, async () => 'a', { namespace: 'function-a' })
    const b = consumer(store, async () => 'b', { namespace: 'function-b' })
    await a.invoke([record])
    await b.invoke([record])
    expect(a.seen).toHaveLength(1)
    expect(b.seen).toHaveLength(1)
  })

  test('the namespace defaults to AWS_LAMBDA_FUNCTION_NAME', async () => {
    const store = new MemoryStore()
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'payments-consumer'
    try {
      const handler = middy<SQSEvent>().use(idempotency({ store, logger: false })).handler(async (e) => await Promise.allSettled(e.Records.map(async () => 1)))
      await handler(sqsEvent([sqsRecord('x')]), lambdaContext())
    } finally {
      delete process.env.AWS_LAMBDA_FUNCTION_NAME
    }
    expect(store.records()[0]?.key).toMatch(/^payments-consumer#[0-9a-f]{64}$/)
  })

  test('a claim the store refuses fails that record alone with the store error as cause', async () => {
    const store = new CountingStore()
    const logger = recordingLogger()
    const errors: unknown[] = []
    const handler = middy<SQSEvent>().use(idempotency({ store, namespace: 'unit', logger, onOutcome: (o) => { if (o.error !== undefined) errors.push(o.error) } }))
      .handler(async (e) => await Promise.allSettled(e.Records.map(async () => 1)))
    const done = sqsRecord('done')
    await handler(sqsEvent([done]), lambdaContext())
    store.failOn.add('claim')
    const refused = sqsRecord('new')
    // Neither record can run, so the handler is skipped and the answer is Lambda's own shape.
    expect(failedIds(await handler(sqsEvent([redelivered(done), refused]), lambdaContext()))).toEqual([refused.messageId])
    const error = errors[0] as IdempotencyStoreError
    expect(error).toBeInstanceOf(IdempotencyStoreError)
    // Logged once, by name and message, at the level of a store fault.
    expect(logger.lines).toEqual([{ level: 'error', entry: expect.objectContaining({ outcome: 'store-error', id: refused.messageId, error: { name: 'IdempotencyStoreError', message: error.message } }) }])
    expect(error.operation).toBe('claim')
    expect(error.cause).toMatchObject({ name: 'ThrottlingException' })
    expect(store.records()).toHaveLength(1)
  })

  test('a completion the store refuses fails the record and keeps its lease (never a silent success)', async () => {
    const store = new CountingStore()
    store.failOn.add('complete')
    const logger = recordingLogger()
    const handler = middy<SQSEvent>().use(idempotency({ store, namespace: 'unit', logger })).handler(async (e) => await Promise.allSettled(e.Records.map(async () => 'charged')))
    const [result] = await handler(sqsEvent([sqsRecord('a')]), lambdaContext()) as PromiseSettledResult<unknown>[]
    expect(result?.status).toBe('rejected')
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyStoreError)
    expect((result as PromiseRejectedResult).reason.cause).toMatchObject({ name: 'ThrottlingException' })
    expect(store.records()).toEqual([expect.objectContaining({ status: 'IN_PROGRESS' })])
    expect(logger.lines.map((l) => l.level)).toEqual(['error'])
  })

  test('a fair (standard) queue with MessageGroupId is not held back like FIFO', async () => {
    const store = new MemoryStore()
    const handler = middy<SQSEvent>().use(idempotency({ store, namespace: 'fair', key: 'body.id', logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async () => 1)))
    await store.claim({ key: storedKey('fair', 'busy'), status: 'IN_PROGRESS', expiry: Date.now() / 1000 + 60, inProgressExpiry: Date.now() + 60_000, leaseToken: 'elsewhere' }, Date.now())
    const records = [sqsRecord({ id: 'busy' }, { groupId: 'tenant-1', fifo: false }), sqsRecord({ id: 'next' }, { groupId: 'tenant-1', fifo: false })]
    const response = await handler(sqsEvent(records), lambdaContext()) as PromiseSettledResult<unknown>[]
    expect(response.map((r) => r.status)).toEqual(['rejected', 'fulfilled'])
  })

  test('a policy function that throws falls back to deleting, and says so', async () => {
    const store = new MemoryStore()
    const logger = recordingLogger()
    const { invoke } = consumer(store, async () => { throw new Error('x') }, { logger, onFailure: () => { throw new Error('policy bug') } })
    await invoke([sqsRecord('a')])
    expect(store.records()).toEqual([])
    expect(logger.lines).toEqual([
      expect.objectContaining({ level: 'error', entry: expect.objectContaining({ message: expect.stringMatching(/onFailure threw/) }) }),
      expect.objectContaining({ level: 'warn', entry: expect.objectContaining({ outcome: 'failed', onFailure: 'delete', error: { name: 'Error', message: 'x' } }) })
    ])
  })

  test('a non-SQS event in sqs mode is refused before anything is claimed', async () => {
    const store = new MemoryStore()
    const handler = middy().use(idempotency({ store, mode: 'sqs', logger: false })).handler(async () => 'x')
    await expect(handler({ detail: {} }, lambdaContext())).rejects.toThrow(IdempotencyConfigError)
    await expect(handler({ detail: {} }, lambdaContext())).rejects.toThrow(/mode 'sqs' expects an SQS event/)
    expect(store.records()).toEqual([])
  })

  test('an onOutcome hook that throws is logged and changes nothing', async () => {
    const store = new MemoryStore()
    const logger = recordingLogger()
    const { invoke } = consumer(store, async () => 'ok', { logger, onOutcome: () => { throw new Error('metrics down') } })
    expect(await invoke([sqsRecord('a')])).toEqual({ batchItemFailures: [] })
    expect(store.records()[0]?.status).toBe('COMPLETED')
    expect(logger.lines).toEqual([expect.objectContaining({ level: 'error', entry: expect.objectContaining({ message: 'idempotency: onOutcome threw; ignored' }) })])
  })

  test('every error is an IdempotencyError with a stable name', () => {
    const error = new IdempotencyInProgressError('k')
    expect(error).toBeInstanceOf(IdempotencyError)
    expect(error.name).toBe('IdempotencyInProgressError')
  })
})

jest.setTimeout(20_000)
