import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyConfigError, IdempotencyHeldBackError, MemoryStore, perRecord, type IdempotencyOptions, type RecordTools } from '../../src/index.js'
import { DynamoDBStore } from '../../src/dynamodb.js'
import { deferred } from '../support/deferred.js'
import { freshTable } from '../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

/** A DynamoDBStore that tells when a record's completion has been written. */
class ObservedStore extends DynamoDBStore {
  readonly completions: Array<{ key: string, held: boolean }> = []
  #waiters: Array<() => void> = []
  override async complete (...args: Parameters<DynamoDBStore['complete']>): Promise<boolean> {
    const held = await super.complete(...args)
    this.completions.push({ key: args[0], held })
    for (const wake of this.#waiters.splice(0)) wake()
    return held
  }

  /** Resolves once `count` completions have been written in all. */
  async completed (count: number): Promise<void> {
    while (this.completions.length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve))
  }
}

/** The status of every record a stack of `namespace` stored. */
const statusOf = async (namespace: string): Promise<Map<string, unknown>> =>
  new Map((await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => [i.idempotencyKey as string, i.status]))

describe.each(batchMiddyVersions)('perRecord against DynamoDB Local, %s', (_name, middy) => {
  const stack = (fn: (record: SQSRecord, tools: RecordTools) => Promise<unknown>, options: Partial<IdempotencyOptions> & { concurrency?: number, timeoutEarlyInMillis?: number, now?: () => number } = {}) => {
    const store = new ObservedStore({ tableName: table.tableName, client: table.client })
    const namespace = `per-record-${Math.random().toString(36).slice(2, 10)}`
    const { timeoutEarlyInMillis, concurrency, ...rest } = options
    const inner = perRecord(fn, concurrency === undefined ? {} : { concurrency })
    // Every run of perRecord, which resolves once each of its records is settled in the store.
    const runs: Array<Promise<unknown>> = []
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: timeoutEarlyInMillis ?? 0 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace, logger: recordingLogger(), ...rest }))
      .handler(async (event, context, opts) => { const run = inner(event, context, opts); runs.push(run); return await run })
    return { store, namespace, runs, handler: handler as unknown as (event: SQSEvent, context: unknown) => Promise<unknown> }
  }

  test('each record is COMPLETED the moment its own work ends, while its neighbours still run', async () => {
    const slow = deferred()
    const seenWhileSlow = deferred<Map<string, unknown>>()
    const records = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]
    const { handler, store, namespace } = stack(async (record) => {
      if (record === records[1]) {
        await store.completed(1)
        seenWhileSlow.resolve(await statusOf(namespace))
        await slow.promise
      }
      return record.messageId
    })
    const answer = handler(sqsEvent(records), lambdaContext())
    const during = await seenWhileSlow.promise
    expect([...during.values()].sort()).toEqual(['COMPLETED', 'IN_PROGRESS'])
    slow.resolve()
    expect(await answer).toEqual({ batchItemFailures: [] })
  })

  test.concurrent('a record hanging to the deadline re-runs alone: its finished neighbours replay (0 re-run)', async () => {
    let nowMs = Date.now()
    const hang = deferred()
    const runs = new Map<string, number>()
    const records = Array.from({ length: 10 }, (_, i) => sqsRecord({ charge: i }))
    const hung = records[4] as SQSRecord
    const { handler, store, namespace } = stack(async (record) => {
      runs.set(record.messageId, (runs.get(record.messageId) ?? 0) + 1)
      if (record.messageId === hung.messageId && runs.get(record.messageId) === 1) await hang.promise
      return `charged ${record.messageId}`
    }, { timeoutEarlyInMillis: 400, now: () => nowMs })
    // Middy's early timeout fires 400 ms before a 3 s deadline, with the hung record still running
    // (the claims of a loaded machine take their time: the hung record must have started by then).
    let deadline = Date.now() + 3000
    const first = await handler(sqsEvent(records), lambdaContext(() => deadline - Date.now()))
    const finishedByThen = new Set(store.completions.map((c) => c.key))
    // Exactly the records whose completion had not been written are reported: the hung one at least.
    expect(failedIds(first)).toContain(hung.messageId)
    expect(failedIds(first)).toHaveLength(10 - finishedByThen.size)
    // Every record that started, but the hung one, is completed once its work ends; one that had not
    // started when the batch closed was released (it never ran), as the answer said.
    const started = runs.size
    expect(runs.has(hung.messageId)).toBe(true)
    await store.completed(started - 1)
    const status = [...(await statusOf(namespace)).values()]
    expect(status.filter((s) => s === 'COMPLETED')).toHaveLength(started - 1)
    expect(status.filter((s) => s === 'IN_PROGRESS')).toHaveLength(1)

    // The lease lapses with the deadline; the queue redelivers the batch.
    nowMs += 60_000
    const second = await handler(sqsEvent(records.map(redelivered)), lambdaContext())
    expect(second).toEqual({ batchItemFailures: [] })
    expect([...runs.entries()].filter(([, n]) => n > 1).map(([id]) => id)).toEqual([hung.messageId])

    // The stale first run ends at last: its completion is fenced off, the new owner's result stands.
    // Its invocation still has time then: past the deadline its completion would be given up at
    // once (and aborted, never reaching the store, unless the store answered within a millisecond).
    deadline = Date.now() + 30_000
    hang.resolve()
    await store.completed(11)
    expect(store.completions.at(-1)).toEqual({ key: expect.any(String), held: false })
  })

  test.concurrent('the Promise.allSettled handler completes in after: the same timeout re-runs every finished record (why perRecord exists)', async () => {
    let nowMs = Date.now()
    const hang = deferred()
    const runs = new Map<string, number>()
    const records = Array.from({ length: 10 }, (_, i) => sqsRecord({ charge: i }))
    const store = new DynamoDBStore({ tableName: table.tableName, client: table.client })
    const work = async (record: SQSRecord): Promise<string> => {
      runs.set(record.messageId, (runs.get(record.messageId) ?? 0) + 1)
      if (record === records[4] && runs.get(record.messageId) === 1) await hang.promise
      return 'charged'
    }
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 150 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: `all-settled-${Math.random()}`, logger: false, now: () => nowMs }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(work)))
    // However long the 9 others took, nothing is completed before the handler returns (the
    // deadline leaves a loaded machine's claims time to reach the handler).
    const deadline = Date.now() + 2000
    await handler(sqsEvent(records), lambdaContext(() => deadline - Date.now())).catch(() => undefined)
    nowMs += 60_000
    await handler(sqsEvent(records.map(redelivered)), lambdaContext())
    expect([...runs.values()].filter((n) => n > 1)).toHaveLength(10)
    hang.resolve()
  })

  test('records not started when Middy times out are released and reported failed; the running one keeps its lease', async () => {
    const hang = deferred()
    const started: string[] = []
    const records = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 }), sqsRecord({ n: 3 })]
    const { handler, namespace } = stack(async (record) => {
      started.push(record.messageId)
      await hang.promise
    }, { concurrency: 1, timeoutEarlyInMillis: 500 })
    // Inside the 1 s timeoutMarginMs a store call waits half of what is left: the claims 500 ms,
    // done before Middy's timeout 500 ms in, and the releases after it 250 ms (DynamoDB Local
    // answers in a few, but slower while another test file runs beside this one).
    const deadline = Date.now() + 1000
    const answer = await handler(sqsEvent(records), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    expect(failedIds(answer).sort()).toEqual(records.map((r) => r.messageId).sort())
    expect(started).toEqual([records[0]?.messageId])
    expect([...(await statusOf(namespace)).values()]).toEqual(['IN_PROGRESS'])
    hang.resolve()
  })

  test('a record whose work rejects because Middy\'s signal aborted keeps its lease: its request may have landed', async () => {
    const records = [sqsRecord({ n: 1 })]
    const { handler, namespace, runs } = stack(async (_record, { signal }) => {
      // A fetch given the signal: the request is out; the abort only stops waiting for its answer.
      await new Promise((_resolve, reject) => { signal.addEventListener('abort', () => { reject(signal.reason) }) })
    }, { timeoutEarlyInMillis: 100 })
    // The claim may wait 350 ms (half of what is left inside timeoutMarginMs), before Middy's timeout 600 ms in.
    const deadline = Date.now() + 700
    const answer = await handler(sqsEvent(records), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    expect(failedIds(answer)).toEqual([records[0]?.messageId])
    // perRecord has settled the rejected record by now: it is still held.
    await Promise.all(runs)
    const settled = await statusOf(namespace)
    expect([...settled.values()]).toEqual(['IN_PROGRESS'])
  })

  test('FIFO: a group runs one record at a time, in order; after a failure the rest of the group is released (never FAILED) and reported', async () => {
    const order: string[] = []
    let running = 0
    let most = 0
    const a = [sqsRecord({ id: 'a1' }, { groupId: 'A' }), sqsRecord({ id: 'a2', fail: true }, { groupId: 'A' }), sqsRecord({ id: 'a3' }, { groupId: 'A' })]
    const b = [sqsRecord({ id: 'b1' }, { groupId: 'B' }), sqsRecord({ id: 'b2' }, { groupId: 'B' })]
    const records = [a[0], b[0], a[1], b[1], a[2]] as SQSRecord[]
    const { handler, namespace } = stack(async (record) => {
      const body = JSON.parse(record.body) as { id: string, fail?: boolean }
      order.push(body.id)
      running++
      most = Math.max(most, running)
      await Promise.resolve()
      running--
      if (body.fail === true) throw new Error(`declined ${body.id}`)
      return body.id
    }, { onFailure: 'fail' })
    const answer = await handler(sqsEvent(records), lambdaContext())
    expect(failedIds(answer).sort()).toEqual([a[1]?.messageId, a[2]?.messageId].sort())
    expect(order.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2'])
    expect(order.filter((id) => id.startsWith('b'))).toEqual(['b1', 'b2'])
    expect(most).toBeLessThanOrEqual(2)
    const statuses = [...(await statusOf(namespace)).values()].sort()
    // a1, b1, b2 COMPLETED; a2 FAILED by policy; a3 released: no record at all.
    expect(statuses).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED'])
  })

  test('at most `concurrency` records run at once', async () => {
    let running = 0
    let most = 0
    const records = Array.from({ length: 8 }, (_, i) => sqsRecord({ i }))
    const { handler } = stack(async () => {
      running++
      most = Math.max(most, running)
      await new Promise((resolve) => setImmediate(resolve))
      running--
    }, { concurrency: 3 })
    expect(await handler(sqsEvent(records), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(most).toBe(3)
  })

  test('the function is given the stored key, the context and Middy\'s signal', async () => {
    const seen: Array<{ key?: string, signal: boolean, context: boolean }> = []
    const context = lambdaContext()
    const { handler, namespace } = stack(async (_record, tools) => {
      seen.push({ key: tools.key, signal: tools.signal instanceof AbortSignal, context: tools.context === context })
    })
    await handler(sqsEvent([sqsRecord('x')]), context)
    expect(seen).toEqual([{ key: expect.stringMatching(new RegExp(`^${namespace}#[0-9a-f]{64}$`)), signal: true, context: true }])
  })

  test('a hand-written handler that skips a record with IdempotencyHeldBackError has it released, even with onFailure fail', async () => {
    const store = new DynamoDBStore({ tableName: table.tableName, client: table.client })
    const namespace = `held-${Math.random().toString(36).slice(2, 10)}`
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace, logger: false, onFailure: 'fail' }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async (record, i) => {
        if (i === 0) throw new Error('declined')
        throw new IdempotencyHeldBackError('an earlier record of its group failed', { group: 'A' })
      })))
    const records = [sqsRecord({ id: 1 }, { groupId: 'A' }), sqsRecord({ id: 2 }, { groupId: 'A' })]
    expect(failedIds(await handler(sqsEvent(records), lambdaContext())).sort()).toEqual(records.map((r) => r.messageId).sort())
    const mine = (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(namespace))
    expect(mine.map((i) => i.status)).toEqual(['FAILED'])
  })

  test('a misordered stack (batch middleware inside ours) still reports every record when the handler throws, held-back ones included', async () => {
    const store = new DynamoDBStore({ tableName: table.tableName, client: table.client })
    const namespace = `misordered-${Math.random().toString(36).slice(2, 10)}`
    const handler = middy<SQSEvent>()
      .use(idempotency({ store, namespace, key: 'body.id', logger: false }))
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .handler(async () => { throw new Error('the handler failed') })
    // a1 is in progress elsewhere, so a2 is held back at claim time and never handed to the handler.
    const { storedKey } = await import('../../src/keys/selector.js')
    await store.claim({ key: storedKey(namespace, 'a1'), status: 'IN_PROGRESS', expiry: Math.floor(Date.now() / 1000) + 60, inProgressExpiry: Date.now() + 60_000, leaseToken: 'elsewhere' }, Date.now())
    const records = [sqsRecord({ id: 'a1' }, { groupId: 'A' }), sqsRecord({ id: 'a2' }, { groupId: 'A' }), sqsRecord({ id: 'b1' }, { groupId: 'B' })]
    const answer = await handler(sqsEvent(records), lambdaContext())
    expect(failedIds(answer).sort()).toEqual(records.map((r) => r.messageId).sort())
  })
})

describe('perRecord without the middleware', () => {
  test('schedules, keeps FIFO order and answers the allSettled shape, index-aligned', async () => {
    const order: string[] = []
    const handler = perRecord(async (record: SQSRecord) => {
      order.push(record.body)
      if (record.body === 'a1') throw new Error('a1 failed')
      return record.body
    })
    const records = [sqsRecord('a1', { groupId: 'A' }), sqsRecord('b1', { groupId: 'B' }), sqsRecord('a2', { groupId: 'A' })]
    const results = await handler(sqsEvent(records), lambdaContext())
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected'])
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyHeldBackError)
    expect(order).toEqual(['a1', 'b1'])
  })

  test('transact without the middleware fails the record with a clear error', async () => {
    const handler = perRecord(async (_record: SQSRecord, { transact }) => { transact({ Put: { TableName: 't', Item: { id: 1 } } }) })
    const [result] = await handler(sqsEvent([sqsRecord('x')]), lambdaContext())
    expect((result as PromiseRejectedResult).reason.message).toMatch(/transact needs the idempotency middleware/)
  })

  test('key without the middleware is the key the middleware would store the record under with its defaults; a batch of no known source has none, and says so when read', async () => {
    const keys: string[] = []
    const unprotected = perRecord(async (_record: SQSRecord, { key }) => { keys.push(key) })
    const record = sqsRecord('x')
    expect(await unprotected(sqsEvent([structuredClone(record)]), lambdaContext())).toEqual([{ status: 'fulfilled', value: undefined }])
    const store = new MemoryStore()
    const protectedHandler = middy<SQSEvent>().use(idempotency({ store, logger: false })).handler(perRecord(async () => 'done'))
    await protectedHandler(sqsEvent([structuredClone(record)]), lambdaContext())
    expect(keys).toEqual(store.records().map((r) => r.key))
    const unknownSource = perRecord(async (_record: unknown, { key }) => key)
    const [result] = await unknownSource({ Records: [{ id: 1 }] } as never, lambdaContext())
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyConfigError)
    expect((result as PromiseRejectedResult).reason.message).toMatch(/key needs the idempotency middleware/)
  })
})
