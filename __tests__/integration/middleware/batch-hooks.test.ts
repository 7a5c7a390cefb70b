import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import {
  idempotency,
  IdempotencyFailedError,
  IdempotencyHeldBackError,
  IdempotencyInProgressError,
  IdempotencyKeyError,
  IdempotencyPayloadMismatchError,
  IdempotencyResponseError,
  type IdempotencyOptions
} from '../../../src/index.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { integrationStores, type StoreUnderTest } from '../../support/stores.js'

type RecordHandler = (record: SQSRecord) => Promise<unknown>

describe.each(integrationStores)('on %s', (_store, open) => {
  let backend: StoreUnderTest
  beforeAll(async () => { backend = await open() })
  afterAll(async () => { await backend.close() })

  describe.each(batchMiddyVersions)('SQS batch, %s', (_, middy) => {
    /** The handler of the README: sqsPartialBatchFailure first, then idempotency, allSettled per record. */
    const consumer = (work: RecordHandler, options: Partial<IdempotencyOptions> = {}) => {
      const seen: string[][] = []
      const logger = recordingLogger()
      const handler = middy<SQSEvent>()
        .use(sqsPartialBatchFailure({ logger: false as never }))
        .use(idempotency({ store: backend.store, namespace: `ns-${Math.random()}`, logger, ...options }))
        .handler(async (event) => {
          seen.push(event.Records.map((r) => r.messageId))
          return await Promise.allSettled(event.Records.map(work))
        })
      return { handler, seen, logger, invoke: async (records: SQSRecord[], context = lambdaContext()) => await handler(sqsEvent(records), context) }
    }

    const itemsFor = async (namespace: string) => await backend.records(namespace)

    test('a new batch runs every record once and stores each as COMPLETED with its response', async () => {
      const namespace = `new-${Math.random()}`
      const { invoke, seen } = consumer(async (r) => ({ charged: JSON.parse(r.body).amount }), { namespace })
      const records = [sqsRecord({ amount: 1 }), sqsRecord({ amount: 2 }), sqsRecord({ amount: 3 })]
      const response = await invoke(records)
      expect(response).toEqual({ batchItemFailures: [] })
      expect(seen).toEqual([records.map((r) => r.messageId)])
      const items = await itemsFor(namespace)
      expect(items).toHaveLength(3)
      expect(items.map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED'])
      expect(items.map((i) => JSON.parse(String(i.responseData)).charged).sort()).toEqual([1, 2, 3])
      for (const item of items) {
        expect(item.key).toMatch(new RegExp(`^${namespace.replace('.', '\\.')}#[0-9a-f]{64}$`))
        expect(typeof item.leaseToken).toBe('string')
        expect(typeof item.payloadHash).toBe('string')
        expect(item.expiry).toBeGreaterThan(Date.now() / 1000 + 3500)
      }
    })

    test('a redelivered batch replays without calling the handler, an undefined result included', async () => {
      let runs = 0
      const { invoke, seen } = consumer(async () => { runs++; return undefined })
      const records = [sqsRecord({ a: 1 }), sqsRecord({ a: 2 })]
      await invoke(records)
      expect(runs).toBe(2)
      const response = await invoke(records.map(redelivered))
      expect(response).toEqual({ batchItemFailures: [] })
      expect(runs).toBe(2)
      expect(seen).toHaveLength(1)
    })

    test('a batch of some duplicates hands the handler only the new records and replays the rest', async () => {
      const results: unknown[] = []
      const { handler } = { handler: middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace: `mixed-${Math.random()}`, logger: false }))
        .handler(async (event) => {
          const settled = await Promise.allSettled(event.Records.map(async (r) => `done ${r.body}`))
          return settled
        }) }
      const old = sqsRecord('old')
      await handler(sqsEvent([old]), lambdaContext())
      const fresh = sqsRecord('fresh')
      const response = await handler(sqsEvent([redelivered(old), fresh]), lambdaContext()) as PromiseSettledResult<unknown>[]
      results.push(...response)
      expect(results).toEqual([
        { status: 'fulfilled', value: 'done old' },
        { status: 'fulfilled', value: 'done fresh' }
      ])
    })

    test('the same key twice in one batch runs once and both records get its result', async () => {
      let runs = 0
      const { invoke, seen } = consumer(async (r) => { runs++; return JSON.parse(r.body).orderId }, { key: 'body.orderId' })
      const first = sqsRecord({ orderId: 'o-1', amount: 5 })
      const copy = sqsRecord({ orderId: 'o-1', amount: 5 })
      const other = sqsRecord({ orderId: 'o-2', amount: 5 })
      const response = await invoke([first, copy, other])
      expect(response).toEqual({ batchItemFailures: [] })
      expect(runs).toBe(2)
      expect(seen).toEqual([[first.messageId, other.messageId]])
    })

    test('a record in progress elsewhere is reported failed, not run, and its record is untouched', async () => {
      const namespace = `conflict-${Math.random()}`
      let release!: () => void
      const gate = new Promise<void>((resolve) => { release = resolve })
      const slow = consumer(async () => { await gate; return 'slow' }, { namespace })
      const fast = consumer(async () => 'fast', { namespace })
      const record = sqsRecord({ n: 1 })
      const neighbour = sqsRecord({ n: 2 })
      const running = slow.invoke([record])
      // Wait until the slow invocation holds the claim (an event, not a sleep).
      await waitFor(async () => (await itemsFor(namespace)).length === 1)
      const response = await fast.invoke([redelivered(record), neighbour])
      expect(failedIds(response)).toEqual([record.messageId])
      expect(fast.seen).toEqual([[neighbour.messageId]])
      const held = (await itemsFor(namespace)).find((i) => i.status === 'IN_PROGRESS')
      expect(held).toBeDefined()
      release()
      expect(await running).toEqual({ batchItemFailures: [] })
      const items = await itemsFor(namespace)
      expect(items.map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED'])
      expect(items.map((i) => JSON.parse(String(i.responseData))).sort()).toEqual(['fast', 'slow'])
    })

    test('the conflict error is an IdempotencyInProgressError with status 409', async () => {
      const namespace = `conflict409-${Math.random()}`
      let release!: () => void
      const gate = new Promise<void>((resolve) => { release = resolve })
      const slow = consumer(async () => { await gate }, { namespace })
      const record = sqsRecord('x')
      const running = slow.invoke([record])
      await waitFor(async () => (await itemsFor(namespace)).length === 1)
      const bare = middy<SQSEvent>().use(idempotency({ store: backend.store, namespace, logger: false })).handler(async (event) => await Promise.allSettled(event.Records.map(async () => 1)))
      const other = sqsRecord('y')
      const [conflict] = await bare(sqsEvent([redelivered(record), other]), lambdaContext()) as PromiseRejectedResult[]
      expect(conflict?.reason).toBeInstanceOf(IdempotencyInProgressError)
      expect(conflict?.reason.statusCode).toBe(409)
      release()
      await running
    })

    test('the same key with another payload is refused with 422 and the stored record is left alone', async () => {
      const namespace = `mismatch-${Math.random()}`
      const { handler } = { handler: middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace, key: 'body.orderId', logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async (r) => JSON.parse(r.body).amount))) }
      await handler(sqsEvent([sqsRecord({ orderId: 'o-9', amount: 10 })]), lambdaContext())
      const before = await itemsFor(namespace)
      const response = await handler(sqsEvent([sqsRecord({ orderId: 'o-9', amount: 99 })]), lambdaContext())
      expect(response).toEqual({ batchItemFailures: [expect.objectContaining({ itemIdentifier: expect.any(String) })] })
      const direct = await handler(sqsEvent([sqsRecord({ orderId: 'o-9', amount: 99 }), sqsRecord({ orderId: 'o-10', amount: 1 })]), lambdaContext()) as PromiseSettledResult<unknown>[]
      expect(direct[0]).toEqual({ status: 'rejected', reason: expect.any(IdempotencyPayloadMismatchError) })
      expect((direct[0] as PromiseRejectedResult).reason.statusCode).toBe(422)
      expect(direct[1]).toEqual({ status: 'fulfilled', value: 1 })
      expect((await itemsFor(namespace)).find((i) => i.key === before[0]?.key)).toEqual(before[0])
    })

    test('a record without a key fails alone with IdempotencyKeyError and leaves no lock', async () => {
      const namespace = `nokey-${Math.random()}`
      const { handler } = { handler: middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace, key: 'body.orderId', logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async () => 'ok'))) }
      const response = await handler(sqsEvent([sqsRecord({ orderId: 'o-1' }), sqsRecord({ noOrder: true }), sqsRecord('not json at all')]), lambdaContext()) as PromiseSettledResult<unknown>[]
      expect(response[0]).toEqual({ status: 'fulfilled', value: 'ok' })
      expect((response[1] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyKeyError)
      expect((response[1] as PromiseRejectedResult).reason.message).toMatch(/record msg-.*key is empty/)
      expect((response[2] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyKeyError)
      expect((response[2] as PromiseRejectedResult).reason.message).toMatch(/key path "body.orderId" reads into body, which is not JSON/)
      expect(await itemsFor(namespace)).toHaveLength(1)
    })

    test("a failing record with onFailure 'delete' is released and runs again on redelivery", async () => {
      const namespace = `delete-${Math.random()}`
      let attempts = 0
      const { invoke } = consumer(async () => { if (++attempts === 1) throw new Error('gateway down'); return 'paid' }, { namespace, onFailure: 'delete' })
      const record = sqsRecord({ order: 1 })
      const neighbour = sqsRecord({ order: 2 })
      expect(failedIds(await invoke([record, neighbour]))).toEqual([record.messageId])
      const afterFailure = await itemsFor(namespace)
      expect(afterFailure).toHaveLength(1)
      expect(failedIds(await invoke([redelivered(record)]))).toEqual([])
      expect(attempts).toBe(3)
      const items = await itemsFor(namespace)
      expect(items.map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED'])
    })

    test("a failing record with onFailure 'fail' is kept FAILED and a redelivery is reported failed without running", async () => {
      const namespace = `fail-${Math.random()}`
      let attempts = 0
      const { handler } = { handler: middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace, onFailure: 'fail', logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async () => { attempts++; throw new TypeError('card declined') }))) }
      const record = sqsRecord({ order: 1 })
      await handler(sqsEvent([record]), lambdaContext())
      const [item] = await itemsFor(namespace)
      expect(item).toMatchObject({ status: 'FAILED', error: { name: 'TypeError', message: 'card declined' } })
      expect(item).not.toHaveProperty('responseData')
      // Nothing left to run: the handler is not called and the answer is Lambda's own shape.
      expect(failedIds(await handler(sqsEvent([redelivered(record)]), lambdaContext()))).toEqual([record.messageId])
      const neighbour = sqsRecord({ order: 2 })
      const [replay] = await handler(sqsEvent([redelivered(record), neighbour]), lambdaContext()) as PromiseRejectedResult[]
      expect(replay?.reason).toBeInstanceOf(IdempotencyFailedError)
      expect(replay?.reason.storedError).toEqual({ name: 'TypeError', message: 'card declined' })
      expect(attempts).toBe(2)
    })

    test('a policy function decides per failure from the attempt number', async () => {
      const namespace = `policy-${Math.random()}`
      const decisions: Array<[number, string]> = []
      let runs = 0
      const { invoke } = consumer(async () => { runs++; throw new Error('still down') }, {
        namespace,
        onFailure: (error, { attempt, key }) => {
          decisions.push([attempt, key])
          return attempt >= 2 ? 'fail' : 'delete'
        }
      })
      const record = sqsRecord({ order: 7 })
      await invoke([record])
      expect(await itemsFor(namespace)).toHaveLength(0)
      const second = redelivered(record)
      await invoke([second])
      expect((await itemsFor(namespace))[0]?.status).toBe('FAILED')
      expect(failedIds(await invoke([redelivered(second)]))).toEqual([record.messageId])
      expect(runs).toBe(2)
      expect(decisions.map(([attempt]) => attempt)).toEqual([1, 2])
      expect(decisions[0]?.[1]).toMatch(new RegExp(`^${namespace.replace('.', '\\.')}#`))
    })

    test('a handler that throws fails every claimed record by policy and touches nothing else', async () => {
      const namespace = `throw-${Math.random()}`
      const done = sqsRecord('done')
      const ok = consumer(async () => 'ok', { namespace })
      await ok.invoke([done])
      const boom = middy<SQSEvent>()
        .use(sqsPartialBatchFailure({ logger: false as never }))
        .use(idempotency({ store: backend.store, namespace, logger: false }))
        .handler(async () => { throw new Error('bug') })
      const fresh = sqsRecord('fresh')
      const response = await boom(sqsEvent([redelivered(done), fresh]), lambdaContext())
      // The batch middleware reports the whole batch failed; the replayed record comes back as a cheap replay.
      expect(failedIds(response).sort()).toEqual([done.messageId, fresh.messageId].sort())
      const items = await itemsFor(namespace)
      expect(items).toHaveLength(1)
      expect(items[0]?.status).toBe('COMPLETED')
    })

    test('the original event is restored for outer middlewares after the handler and on error', async () => {
      const seenByOuter: number[] = []
      const store = backend.store
      const handler = middy<SQSEvent>()
        .use({ after: async (request) => { seenByOuter.push(request.event.Records.length) }, onError: async (request) => { seenByOuter.push(request.event.Records.length) } })
        .use(idempotency({ store, namespace: `restore-${Math.random()}`, logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async () => 1)))
      const done = sqsRecord('a')
      await handler(sqsEvent([done]), lambdaContext())
      await handler(sqsEvent([redelivered(done), sqsRecord('b')]), lambdaContext())
      expect(seenByOuter).toEqual([1, 2])
    })

    test('a batch of only duplicates does not call the handler and still answers correctly', async () => {
      let runs = 0
      const { invoke, seen } = consumer(async () => { runs++; return 'x' })
      const records = [sqsRecord(1), sqsRecord(2), sqsRecord(3)]
      await invoke(records)
      const response = await invoke(records.map(redelivered))
      expect(response).toEqual({ batchItemFailures: [] })
      expect(runs).toBe(3)
      expect(seen).toHaveLength(1)
    })

    test('an empty Records answers with no failures without calling the handler', async () => {
      const { invoke, seen } = consumer(async () => 'x', { mode: 'sqs' })
      expect(await invoke([])).toEqual({ batchItemFailures: [] })
      expect(seen).toHaveLength(0)
    })

    test('FIFO: once a record of a group cannot run, the later records of that group are held back; other groups go on', async () => {
      const namespace = `fifo-${Math.random()}`
      let release!: () => void
      const gate = new Promise<void>((resolve) => { release = resolve })
      const a1 = sqsRecord('a1', { groupId: 'A' })
      const blocker = consumer(async () => { await gate }, { namespace })
      const running = blocker.invoke([a1])
      await waitFor(async () => (await itemsFor(namespace)).length === 1)

      const a2 = sqsRecord('a2', { groupId: 'A' })
      const b1 = sqsRecord('b1', { groupId: 'B' })
      const a3 = sqsRecord('a3', { groupId: 'A' })
      const b2 = sqsRecord('b2', { groupId: 'B' })
      const handler = middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace, logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async (r) => r.body)))
      const seenRecords: string[] = []
      const response = await middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace, logger: false }))
        .handler(async (event) => { seenRecords.push(...event.Records.map((r) => r.body)); return await Promise.allSettled(event.Records.map(async (r) => r.body)) })(sqsEvent([redelivered(a1), a2, b1, a3, b2]), lambdaContext()) as PromiseSettledResult<unknown>[]
      expect(seenRecords).toEqual(['b1', 'b2'])
      expect((response[0] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyInProgressError)
      expect((response[1] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyHeldBackError)
      expect((response[3] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyHeldBackError)
      expect((response[1] as PromiseRejectedResult).reason.message).toContain('message group A')
      expect(response[2]).toEqual({ status: 'fulfilled', value: 'b1' })
      expect(response[4]).toEqual({ status: 'fulfilled', value: 'b2' })
      // Held-back records were never claimed: no lock for a2 or a3.
      expect(await itemsFor(namespace)).toHaveLength(3)
      release()
      await running
      // Redelivered in order, the group goes through.
      const later = await handler(sqsEvent([redelivered(a2), redelivered(a3)]), lambdaContext())
      expect(later).toEqual([{ status: 'fulfilled', value: 'a2' }, { status: 'fulfilled', value: 'a3' }])
    })

    test('a native { batchItemFailures } answer is mapped back to records and rebuilt with ours', async () => {
      const namespace = `native-${Math.random()}`
      const done = sqsRecord('done')
      const bad = sqsRecord('bad')
      const good = sqsRecord('good')
      const handler = middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace, logger: false }))
        .handler(async (event) => ({ batchItemFailures: event.Records.filter((r) => r.body === 'bad').map((r) => ({ itemIdentifier: r.messageId })) }))
      await handler(sqsEvent([done]), lambdaContext())
      const response = await handler(sqsEvent([redelivered(done), bad, good]), lambdaContext())
      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
      const items = await itemsFor(namespace)
      expect(items.map((i) => i.status).sort()).toEqual(['COMPLETED', 'COMPLETED'])
    })

    test('a response that cannot be stored fails its record with a clear error and keeps it FAILED, never re-run', async () => {
      const namespace = `response-${Math.random()}`
      let runs = 0
      const handler = middy<SQSEvent>()
        .use(idempotency({ store: backend.store, namespace, logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async (r) => {
          runs++
          // Over what the store can keep (DynamoDB: an item of 400 KB; RedisStore: its maxResponseBytes).
          if (r.body === 'big') return 'x'.repeat((backend.store.limits?.maxResponseBytes ?? 0) + 1)
          if (r.body === 'bigint') return { amount: 10n }
          if (r.body === 'map') return new Map([['a', 1]])
          const circular: Record<string, unknown> = {}
          circular.self = circular
          return r.body === 'circular' ? circular : 'fine'
        })))
      // A Map is stored as what JSON.stringify makes of it ({}), as issue 8 #4 decided: it completes.
      const records = ['big', 'bigint', 'circular', 'map', 'fine'].map((b) => sqsRecord(b))
      const response = await handler(sqsEvent(records), lambdaContext()) as PromiseSettledResult<unknown>[]
      const reasons = response.slice(0, 3).map((r) => (r as PromiseRejectedResult).reason as Error)
      for (const reason of reasons) expect(reason).toBeInstanceOf(IdempotencyResponseError)
      expect(reasons[0]?.message).toMatch(/bytes of JSON/)
      expect(reasons[1]?.message).toMatch(/\$\.amount is a BigInt/)
      expect(reasons[2]?.message).toMatch(/\$\.self is a circular reference/)
      expect(response[3]).toEqual({ status: 'fulfilled', value: new Map([['a', 1]]) })
      expect(response[4]).toEqual({ status: 'fulfilled', value: 'fine' })
      const items = await itemsFor(namespace)
      expect(items.filter((i) => i.status === 'FAILED')).toHaveLength(3)
      expect(items.filter((i) => i.status === 'COMPLETED').map((i) => i.responseData).sort()).toEqual(['"fine"', '{}'])
      await handler(sqsEvent(records.map(redelivered)), lambdaContext())
      expect(runs).toBe(5)
    })

    test('Middy early timeout keeps the lease: the record stays IN_PROGRESS and is not deleted', async () => {
      const namespace = `timeout-${Math.random()}`
      let finish!: () => void
      const stuck = new Promise<void>((resolve) => { finish = resolve })
      // The claim may wait 400 ms (half of what is left inside timeoutMarginMs), before Middy's timeout 500 ms in.
      const deadline = Date.now() + 800
      const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 300 })
        .use(sqsPartialBatchFailure({ logger: false as never }))
        .use(idempotency({ store: backend.store, namespace, logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async () => { await stuck })))
      const record = sqsRecord('slow')
      const response = await handler(sqsEvent([record]), lambdaContext(() => deadline - Date.now()))
      expect(failedIds(response)).toEqual([record.messageId])
      const [item] = await itemsFor(namespace)
      expect(item?.status).toBe('IN_PROGRESS')
      expect(Number(item?.inProgressExpiry)).toBeGreaterThanOrEqual(deadline - 50)
      finish()
    })

    test('lease takeover: the stale owner can neither overwrite nor delete the new owner\'s record', async () => {
      const namespace = `takeover-${Math.random()}`
      const logger = recordingLogger()
      const finishers: Array<(outcome: 'succeed' | 'fail') => void> = []
      // The stale owner's clock stands still; the new owner's is past the lease (30 s, its remaining time).
      const staleNow = Date.now()
      // timeoutEarlyInMillis 0: with no time left, Middy's early timeout would fire first.
      const stale = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
        .use(idempotency({ store: backend.store, namespace, logger, now: () => staleNow }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async () => await new Promise((resolve, reject) => {
          finishers.push((outcome) => { if (outcome === 'succeed') resolve('stale'); else reject(new Error('late failure')) })
        }))))
      for (const [i, outcome] of (['succeed', 'fail'] as const).entries()) {
        const record = sqsRecord(`takeover-${outcome}`)
        // The stale owner's lease lapses (by the new owner's clock) while its handler still runs;
        // it ends far from its deadline (a failure near it would keep the lease). A remaining time
        // of 0 would not do: each store call is given up at the deadline.
        const running = stale(sqsEvent([record]), lambdaContext(30_000))
        await waitFor(async () => finishers.length === i + 1)
        const fresh = consumer(async () => 'fresh', { namespace, now: () => staleNow + 30_001 })
        expect(await fresh.invoke([redelivered(record)])).toEqual({ batchItemFailures: [] })
        finishers[i]?.(outcome)
        await running
      }
      const items = await itemsFor(namespace)
      expect(items.map((i) => [i.status, i.responseData])).toEqual([['COMPLETED', '"fresh"'], ['COMPLETED', '"fresh"']])
      // One line per decision: the completion refused (its outcome), then the release refused and the failure it was for.
      expect(logger.lines.filter((l) => l.level === 'warn').map((l) => (l.entry as { message: string, outcome?: string }))).toEqual([
        expect.objectContaining({ outcome: 'lease-lost', message: expect.stringMatching(/lease lost: another invocation took the record over/) }),
        expect.objectContaining({ message: expect.stringMatching(/lease lost before release/) }),
        expect.objectContaining({ outcome: 'failed', error: { name: 'Error', message: 'late failure' } })
      ])
    })

    test('once a record expires, a redelivery runs again', async () => {
      let now = Date.UTC(2031, 0, 1)
      let runs = 0
      const { invoke } = consumer(async () => ++runs, { expiresAfterSeconds: 60, now: () => now })
      const record = sqsRecord('expiring')
      await invoke([record])
      now += 59_000
      await invoke([redelivered(record)])
      expect(runs).toBe(1)
      now += 2_000
      await invoke([redelivered(record)])
      expect(runs).toBe(2)
    })

    test('concurrent invocations of the same record run it exactly once', async () => {
      const namespace = `concurrent-${Math.random()}`
      let runs = 0
      const invocations = 8
      let others = 0
      let allOthersDone!: () => void
      const othersDone = new Promise<void>((resolve) => { allOthersDone = resolve })
      const handler = middy<SQSEvent>()
        .use(sqsPartialBatchFailure({ logger: false as never }))
        .use(idempotency({ store: backend.store, namespace, logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async () => {
          runs++
          // Hold the claim until every other invocation has answered, so they all overlap with it.
          await othersDone
          return 'charged'
        })))
      const record = sqsRecord({ amount: 100 })
      const responses = await Promise.all(Array.from({ length: invocations }, async () => {
        const response = await handler(sqsEvent([redelivered(record)]), lambdaContext())
        if (failedIds(response).length > 0 && ++others === invocations - 1) allOthersDone()
        return response
      }))
      expect(runs).toBe(1)
      expect(responses.filter((r) => failedIds(r).length === 0)).toHaveLength(1)
      expect(responses.filter((r) => failedIds(r).length === 1)).toHaveLength(invocations - 1)
    })
  })

  /** Polls a condition on the table until it holds: waits for an observable event, bounded. */
  const waitFor = async (condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met in time')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
})
