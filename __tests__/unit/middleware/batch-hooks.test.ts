import { describe, expect, jest, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import {
  idempotency,
  IdempotencyConfigError,
  IdempotencyError,
  IdempotencyInProgressError,
  IdempotencyStoreError,
  MemoryStore,
  type IdempotencyOptions,
  type IdempotencyStore,
  type OutcomeReport
} from '../../../src/index.js'
import { storedKey } from '../../../src/keys/selector.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

/** A MemoryStore whose every call is counted and can be made to fail. */
class CountingStore extends MemoryStore {
  calls: string[] = []
  inFlight = 0
  maxInFlight = 0
  failOn = new Set<string>()
  async #track<T> (name: string, run: () => Promise<T>): Promise<T> {
    this.calls.push(name)
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    try {
      await Promise.resolve()
      if (this.failOn.has(name)) throw Object.assign(new Error(`${name} refused`), { name: 'ThrottlingException' })
      return await run()
    } finally {
      this.inFlight--
    }
  }

  override claim (...args: Parameters<MemoryStore['claim']>) { return this.#track('claim', async () => await super.claim(...args)) }
  override complete (...args: Parameters<MemoryStore['complete']>) { return this.#track('complete', async () => await super.complete(...args)) }
  override fail (...args: Parameters<MemoryStore['fail']>) { return this.#track('fail', async () => await super.fail(...args)) }
  override release (...args: Parameters<MemoryStore['release']>) { return this.#track('release', async () => await super.release(...args)) }
  override read (...args: Parameters<MemoryStore['read']>) { return this.#track('read', async () => await super.read(...args)) }
}

const consumer = (store: IdempotencyStore, work: (r: SQSRecord) => Promise<unknown>, options: Partial<IdempotencyOptions> = {}) => {
  const seen: SQSRecord[][] = []
  const handler = middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace: 'unit', logger: recordingLogger(), ...options }))
    .handler(async (event) => { seen.push(event.Records); return await Promise.allSettled(event.Records.map(work)) })
  return { handler, seen, invoke: async (records: SQSRecord[], context = lambdaContext()) => await handler(sqsEvent(records), context) }
}

describe('SQS batch with MemoryStore', () => {
  test('a new record costs one claim and one completion, nothing else', async () => {
    const store = new CountingStore()
    await consumer(store, async () => 'ok').invoke([sqsRecord('a')])
    expect(store.calls).toEqual(['claim', 'complete'])
  })

  test('redelivered records are read in one request and replayed without any write', async () => {
    const store = new CountingStore()
    const { invoke } = consumer(store, async () => 'ok')
    const records = [sqsRecord('a'), sqsRecord('b'), sqsRecord('c')]
    await invoke(records)
    store.calls = []
    expect(await invoke(records.map(redelivered))).toEqual({ batchItemFailures: [] })
    expect(store.calls).toEqual(['read'])
  })

  test('a failed read before claiming falls back to claims, and says so', async () => {
    const store = new CountingStore()
    const logger = recordingLogger()
    const { invoke } = consumer(store, async () => 'ok', { logger })
    const record = sqsRecord('a')
    await invoke([record])
    store.failOn.add('read')
    store.calls = []
    expect(await invoke([redelivered(record)])).toEqual({ batchItemFailures: [] })
    expect(store.calls).toEqual(['read', 'claim'])
    expect(logger.lines).toEqual([expect.objectContaining({ level: 'warn' })])
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
    await consumer(store, async () => 'ok', { maxStoreRequests: 4 })
      .invoke(Array.from({ length: 50 }, (_, i) => sqsRecord(i)))
    expect(store.maxInFlight).toBe(4)
    expect(store.records()).toHaveLength(50)
  })

  test('reads of many redeliveries stay within maxStoreRequests, as many keys a read as the store takes (100)', async () => {
    const store = new CountingStore({ limits: { maxResponseBytes: 1024 * 1024, maxReadKeys: 100 } })
    const { invoke } = consumer(store, async () => 'ok', { maxStoreRequests: 2 })
    const records = Array.from({ length: 500 }, (_, i) => sqsRecord(i))
    await invoke(records)
    store.calls = []
    store.maxInFlight = 0
    expect(await invoke(records.map(redelivered))).toEqual({ batchItemFailures: [] })
    expect(store.calls).toEqual(['read', 'read', 'read', 'read', 'read'])
    expect(store.maxInFlight).toBe(2)
  })

  test('in a mixed batch, first deliveries are claimed while the redeliveries are being read', async () => {
    const store = new CountingStore()
    const { invoke } = consumer(store, async () => 'ok')
    const old = sqsRecord('old')
    await invoke([old])
    let releaseRead!: () => void
    const readHeld = new Promise<void>((resolve) => { releaseRead = resolve })
    const read = store.read.bind(store)
    store.read = async (keys) => { await readHeld; return await read(keys) }
    store.calls = []
    const running = invoke([redelivered(old), sqsRecord('new 1'), sqsRecord('new 2')])
    await waitUntil(() => store.calls.filter((c) => c === 'claim').length === 2)
    expect(store.calls).toEqual(['claim', 'claim'])
    releaseRead()
    expect(await running).toEqual({ batchItemFailures: [] })
    expect(store.calls.filter((c) => c === 'claim')).toHaveLength(2)
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

  test('the key is taken before the handler runs: mutating the record does not change it', async () => {
    const store = new MemoryStore()
    const { invoke, seen } = consumer(store, async (r) => { (r as { body: string }).body = JSON.stringify({ orderId: 'changed' }); return 'ok' }, { key: 'body.orderId' })
    const record = sqsRecord({ orderId: 'o-1' })
    await invoke([structuredClone(record)])
    await invoke([redelivered(record)])
    expect(seen).toHaveLength(1)
    expect(store.records()).toHaveLength(1)
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

  test('a handler answer of the wrong length is a clear error, and the records that ran are kept FAILED, never re-run', async () => {
    const store = new MemoryStore()
    let runs = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(async (event) => { runs += event.Records.length; return [{ status: 'fulfilled', value: 1 }] })
    const records = [sqsRecord('a'), sqsRecord('b')]
    expect(failedIds(await handler(sqsEvent(records), lambdaContext()))).toEqual(records.map((r) => r.messageId))
    expect(store.records().map((r) => [r.status, r.error?.name, r.error?.message])).toEqual([
      ['FAILED', 'IdempotencyConfigError', expect.stringMatching(/returned 1 results for the 2 records/)],
      ['FAILED', 'IdempotencyConfigError', expect.stringMatching(/returned 1 results for the 2 records/)]
    ])
    expect(failedIds(await handler(sqsEvent(records.map(redelivered)), lambdaContext()))).toEqual(records.map((r) => r.messageId))
    expect(runs).toBe(2)
  })

  test('a native { batchItemFailures } answer is reported exactly, with or without the batch middleware', async () => {
    const store = new MemoryStore()
    const native = async (event: SQSEvent) => ({ batchItemFailures: event.Records.filter((r) => r.body === 'bad').map((r) => ({ itemIdentifier: r.messageId })) })
    const withBatch = middy<SQSEvent>().use(sqsPartialBatchFailure({ logger: false as never })).use(idempotency({ store, logger: false })).handler(native)
    const alone = middy<SQSEvent>().use(idempotency({ store, logger: false })).handler(native)
    for (const handler of [withBatch, alone]) {
      const bad = sqsRecord('bad')
      const response = await handler(sqsEvent([sqsRecord('good'), bad]), lambdaContext())
      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
      // What Lambda receives is the JSON: only batchItemFailures.
      expect(JSON.parse(JSON.stringify(response))).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
    }
  })

  test('a result that merely has a status field is a result, not a settled entry', async () => {
    const store = new MemoryStore()
    const handler = middy<SQSEvent>().use(idempotency({ store, logger: false }))
      .handler(async (event) => await Promise.all(event.Records.map(async () => ({ status: 'rejected', reason: 'card declined', retryable: false }))))
    const response = await handler(sqsEvent([sqsRecord('a')]), lambdaContext())
    expect(response).toEqual([{ status: 'fulfilled', value: { status: 'rejected', reason: 'card declined', retryable: false } }])
    expect(store.records()[0]?.status).toBe('COMPLETED')
  })

  test('FIFO: the same key in two message groups, in progress elsewhere: the copy shares its original\'s refusal and holds its own group back', async () => {
    const store = new MemoryStore()
    const seen: string[] = []
    const handler = middy<SQSEvent>()
      .use(idempotency({ store, namespace: 'fifo-copies', key: 'body.paymentId', logger: false }))
      .handler(async (event) => { seen.push(...event.Records.map((r) => r.messageId)); return await Promise.allSettled(event.Records.map(async () => 1)) })
    await store.claim({ key: storedKey('fifo-copies', 'P'), status: 'IN_PROGRESS', expiry: Date.now() / 1000 + 60, inProgressExpiry: Date.now() + 60_000, leaseToken: 'elsewhere' }, Date.now())
    const a1 = sqsRecord({ paymentId: 'P' }, { groupId: 'A' })
    const b1 = sqsRecord({ paymentId: 'P' }, { groupId: 'B' })
    const b2 = sqsRecord({ paymentId: 'Q' }, { groupId: 'B' })
    const response = await handler(sqsEvent([a1, b1, b2]), lambdaContext())
    expect(seen).toEqual([])
    expect(response).toEqual({ batchItemFailures: [a1, b1, b2].map((r) => ({ itemIdentifier: r.messageId })) })
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

  test('a handler returning nothing counts as every record done (Lambda reads it so)', async () => {
    const store = new MemoryStore()
    const handler = middy<SQSEvent>().use(idempotency({ store, logger: false })).handler(async () => undefined)
    expect(await handler(sqsEvent([sqsRecord('a'), sqsRecord('b')]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(store.records().filter((r) => r.status === 'COMPLETED')).toHaveLength(2)
  })

  test('an in-batch copy whose primary fails fails with the same error', async () => {
    const store = new MemoryStore()
    const boom = new Error('declined')
    const handler = middy<SQSEvent>().use(idempotency({ store, key: 'body.id', logger: false })).handler(async (e) => await Promise.allSettled(e.Records.map(async () => { throw boom })))
    const response = await handler(sqsEvent([sqsRecord({ id: 1 }), sqsRecord({ id: 1 })]), lambdaContext())
    expect(response).toEqual([{ status: 'rejected', reason: boom }, { status: 'rejected', reason: boom }])
  })

  test('a non-SQS event in sqs mode is refused before anything is claimed', async () => {
    const store = new MemoryStore()
    const handler = middy().use(idempotency({ store, mode: 'sqs', logger: false })).handler(async () => 'x')
    await expect(handler({ detail: {} }, lambdaContext())).rejects.toThrow(IdempotencyConfigError)
    await expect(handler({ detail: {} }, lambdaContext())).rejects.toThrow(/mode 'sqs' expects an SQS event/)
    expect(store.records()).toEqual([])
  })

  test('onOutcome is told what became of every record, once', async () => {
    const store = new MemoryStore()
    const outcomes: OutcomeReport[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'outcomes', key: 'body.id', logger: false, onOutcome: (o) => { outcomes.push(o) } }))
      .handler(async (e) => await Promise.allSettled(e.Records.map(async (r) => { if (r.body.includes('boom')) throw new Error('boom'); return 1 })))
    const done = sqsRecord({ id: 'done' })
    await handler(sqsEvent([done]), lambdaContext())
    const busyKey = storedKey('outcomes', 'busy')
    await store.claim({ key: busyKey, status: 'IN_PROGRESS', expiry: Date.now() / 1000 + 60, inProgressExpiry: Date.now() + 60_000, leaseToken: 'elsewhere' }, Date.now())
    outcomes.length = 0
    const records = [
      redelivered(done), sqsRecord({ id: 'new' }), sqsRecord({ id: 'new' }), sqsRecord({ noId: 1 }),
      sqsRecord({ id: 'x', boom: 1 }), sqsRecord({ id: 'done', other: 1 }), sqsRecord({ id: 'busy' })
    ]
    await handler(sqsEvent(records), lambdaContext())
    expect(outcomes.map((o) => [o.messageId, o.kind])).toEqual([
      [records[0]?.messageId, 'replayed'],
      [records[1]?.messageId, 'completed'],
      [records[2]?.messageId, 'in-batch-copy'],
      [records[3]?.messageId, 'no-key'],
      [records[4]?.messageId, 'failed'],
      [records[5]?.messageId, 'mismatch'],
      [records[6]?.messageId, 'in-progress']
    ])
    expect(outcomes[4]?.error).toEqual(new Error('boom'))
    expect(outcomes[6]).toEqual({ kind: 'in-progress', key: busyKey, id: records[6]?.messageId, messageId: records[6]?.messageId, durationMs: expect.any(Number), error: expect.any(IdempotencyInProgressError) })
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

const waitUntil = async (condition: () => boolean): Promise<void> => {
  const deadline = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((resolve) => setImmediate(resolve))
  }
}

jest.setTimeout(20_000)
