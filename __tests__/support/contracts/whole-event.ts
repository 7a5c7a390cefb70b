import { describe, expect, jest, test } from '@jest/globals'
import {
  HttpServerErrorResponse,
  idempotency,
  IdempotencyFailedError,
  IdempotencyKeyError,
  IdempotencyPayloadMismatchError,
  IdempotencyResponseError,
  type IdempotencyOptions,
  type IdempotencyStore
} from '../../../src/index.js'
import type { IdempotencyRecord } from '../../../src/store.js'
import { middyVersions } from '../middy.js'
import { lambdaContext, recordingLogger } from '../sqs.js'

/** A store to test and a way to see every record it holds. */
export interface StoreUnderTest {
  store: IdempotencyStore
  records: () => Promise<Array<Partial<IdempotencyRecord>>>
}

type Event = { orderId?: string, amount?: number }

/**
 * The promises of whole-event mode (DESIGN §4), run against any store: MemoryStore in the
 * unit tests, DynamoDBStore on DynamoDB Local in the integration tests. Same semantics, same tests.
 */
export const describeWholeEvent = (storeName: string, makeStore: () => Promise<StoreUnderTest>): void => {
  describe.each(middyVersions)(`whole event with ${storeName}, %s`, (_, middy) => {
    const build = async (work: (event: Event) => Promise<unknown>, options: Partial<IdempotencyOptions> = {}) => {
      const { store, records } = await makeStore()
      const calls = jest.fn(work)
      const handler = middy<Event, unknown>()
        .use(idempotency({ store, namespace: 'api', key: 'orderId', logger: recordingLogger(), ...options }))
        .handler(async (event) => await calls(event))
      return { handler, calls, records }
    }

    test('a new event runs and its record is COMPLETED with the response', async () => {
      const { handler, calls, records } = await build(async (e) => ({ statusCode: 201, charged: e.amount }))
      expect(await handler({ orderId: 'o-1', amount: 5 }, lambdaContext())).toEqual({ statusCode: 201, charged: 5 })
      expect(calls).toHaveBeenCalledTimes(1)
      expect(await records()).toEqual([expect.objectContaining({ status: 'COMPLETED', responseData: '{"statusCode":201,"charged":5}' })])
    })

    test('a duplicate returns the stored response without running the handler', async () => {
      const { handler, calls } = await build(async () => ({ statusCode: 201 }))
      await handler({ orderId: 'o-1', amount: 5 }, lambdaContext())
      expect(await handler({ orderId: 'o-1', amount: 5 }, lambdaContext())).toEqual({ statusCode: 201 })
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test('an undefined result is replayed as undefined, not re-run', async () => {
      const { handler, calls } = await build(async () => undefined)
      await handler({ orderId: 'o-2' }, lambdaContext())
      expect(await handler({ orderId: 'o-2' }, lambdaContext())).toBeUndefined()
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test('a duplicate while the first still runs is a 409 IdempotencyInProgressError', async () => {
      let release!: () => void
      const gate = new Promise<void>((resolve) => { release = resolve })
      let started!: () => void
      const running = new Promise<void>((resolve) => { started = resolve })
      const { handler, records } = await build(async () => { started(); await gate; return 'done' })
      const first = handler({ orderId: 'o-3' }, lambdaContext())
      await running
      await expect(handler({ orderId: 'o-3' }, lambdaContext())).rejects.toMatchObject({ name: 'IdempotencyInProgressError', statusCode: 409 })
      expect((await records())[0]?.status).toBe('IN_PROGRESS')
      release()
      expect(await first).toBe('done')
    })

    test('the same key with another payload is a 422 IdempotencyPayloadMismatchError and writes nothing', async () => {
      const { handler, records } = await build(async () => 'ok')
      await handler({ orderId: 'o-4', amount: 1 }, lambdaContext())
      const before = await records()
      const error = await handler({ orderId: 'o-4', amount: 2 }, lambdaContext()).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(IdempotencyPayloadMismatchError)
      expect((error as IdempotencyPayloadMismatchError).statusCode).toBe(422)
      expect(await records()).toEqual(before)
    })

    test('an event without a key is an IdempotencyKeyError and the handler does not run', async () => {
      const { handler, calls, records } = await build(async () => 'ok')
      await expect(handler({ amount: 1 }, lambdaContext())).rejects.toThrow(IdempotencyKeyError)
      expect(calls).not.toHaveBeenCalled()
      expect(await records()).toEqual([])
    })

    test("a failure with 'delete' releases the record and the retry runs", async () => {
      let attempt = 0
      const { handler, records } = await build(async () => { if (++attempt === 1) throw new Error('down'); return 'ok' })
      await expect(handler({ orderId: 'o-5' }, lambdaContext())).rejects.toThrow('down')
      expect(await records()).toEqual([])
      expect(await handler({ orderId: 'o-5' }, lambdaContext())).toBe('ok')
    })

    test("a failure with 'fail' is replayed as IdempotencyFailedError", async () => {
      const { handler, calls } = await build(async () => { throw new RangeError('limit') }, { onFailure: 'fail' })
      await expect(handler({ orderId: 'o-6' }, lambdaContext())).rejects.toThrow(RangeError)
      const replay = await handler({ orderId: 'o-6' }, lambdaContext()).catch((e: unknown) => e)
      expect(replay).toBeInstanceOf(IdempotencyFailedError)
      expect((replay as IdempotencyFailedError).storedError).toEqual({ name: 'RangeError', message: 'limit' })
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test('a result that cannot be stored fails with IdempotencyResponseError and is kept FAILED', async () => {
      const { handler, records, calls } = await build(async () => ({ id: 1n }))
      await expect(handler({ orderId: 'o-7' }, lambdaContext())).rejects.toThrow(IdempotencyResponseError)
      expect((await records())[0]?.status).toBe('FAILED')
      await expect(handler({ orderId: 'o-7' }, lambdaContext())).rejects.toThrow(IdempotencyFailedError)
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test("a 5xx response is a failure: returned unchanged, given to onFailure, never stored; with 'delete' the retry runs", async () => {
      let attempt = 0
      const failures: unknown[] = []
      const { handler, records, calls } = await build(
        async () => (++attempt === 1 ? { statusCode: 503, body: 'busy' } : { statusCode: 201, body: 'charged' }),
        { onFailure: (error) => { failures.push(error); return 'delete' } }
      )
      expect(await handler({ orderId: 'o-9' }, lambdaContext())).toEqual({ statusCode: 503, body: 'busy' })
      expect(failures).toEqual([expect.objectContaining({ name: 'HttpServerErrorResponse', statusCode: 503, response: { statusCode: 503, body: 'busy' } })])
      expect(failures[0]).toBeInstanceOf(HttpServerErrorResponse)
      expect(await records()).toEqual([])
      expect(await handler({ orderId: 'o-9' }, lambdaContext())).toEqual({ statusCode: 201, body: 'charged' })
      expect(calls).toHaveBeenCalledTimes(2)
      expect((await records()).map((r) => r.status)).toEqual(['COMPLETED'])
    })

    test("a 5xx response whose statusCode is a string ('503') is a failure alike: onFailure is given its number", async () => {
      const failures: unknown[] = []
      const { handler, records } = await build(async () => ({ statusCode: '503', body: 'busy' }), { onFailure: (error) => { failures.push(error); return 'delete' } })
      expect(await handler({ orderId: 'o-12' }, lambdaContext())).toEqual({ statusCode: '503', body: 'busy' })
      expect(failures).toEqual([expect.objectContaining({ name: 'HttpServerErrorResponse', statusCode: 503, message: 'the handler answered HTTP 503', response: { statusCode: '503', body: 'busy' } })])
      expect(await records()).toEqual([])
    })

    test("a 5xx response with 'fail' is kept FAILED and replayed as IdempotencyFailedError, never as a stored 500", async () => {
      const { handler, records, calls } = await build(async () => ({ statusCode: 500, body: 'oops' }), { onFailure: 'fail' })
      expect(await handler({ orderId: 'o-10' }, lambdaContext())).toEqual({ statusCode: 500, body: 'oops' })
      expect(await records()).toEqual([expect.objectContaining({ status: 'FAILED' })])
      const replay = await handler({ orderId: 'o-10' }, lambdaContext()).catch((e: unknown) => e)
      expect(replay).toBeInstanceOf(IdempotencyFailedError)
      expect((replay as IdempotencyFailedError).storedError).toEqual({ name: 'HttpServerErrorResponse', message: 'the handler answered HTTP 500' })
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test('a 4xx response is a result: stored and replayed', async () => {
      const { handler, calls } = await build(async () => ({ statusCode: 402, body: 'declined' }))
      await handler({ orderId: 'o-11' }, lambdaContext())
      expect(await handler({ orderId: 'o-11' }, lambdaContext())).toEqual({ statusCode: 402, body: 'declined' })
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test('Middy early timeout keeps the lease: the record stays IN_PROGRESS', async () => {
      const { store, records } = await makeStore()
      // The claim may wait 350 ms (half of what is left inside timeoutMarginMs), before Middy's timeout 500 ms in.
      const deadline = Date.now() + 700
      const handler = middy<Event, unknown>({ timeoutEarlyInMillis: 200 })
        .use(idempotency({ store, key: 'orderId', logger: false }))
        .handler(async () => await new Promise(() => {}))
      await expect(handler({ orderId: 'o-8' }, lambdaContext(() => deadline - Date.now()))).rejects.toMatchObject({ name: 'TimeoutError' })
      expect(await records()).toEqual([expect.objectContaining({ status: 'IN_PROGRESS' })])
    })

    test('an HTTP retry (new requestContext and headers, same body) is a replay; another body is a 422', async () => {
      const { store } = await makeStore()
      const calls = jest.fn(async () => ({ statusCode: 201, body: '{"id":1}' }))
      const handler = middy<Record<string, unknown>, unknown>()
        .use(idempotency({ store, key: 'headers.idempotency-key', logger: false }))
        .handler(calls)
      const request = (requestId: string, body: string) => ({
        headers: { 'idempotency-key': 'k-1', 'x-amzn-trace-id': requestId }, body, requestContext: { requestId, timeEpoch: Date.now() }
      })
      await handler(request('r-1', '{"amount":5}'), lambdaContext())
      expect(await handler(request('r-2', '{"amount":5}'), lambdaContext())).toEqual({ statusCode: 201, body: '{"id":1}' })
      await expect(handler(request('r-3', '{"amount":6}'), lambdaContext())).rejects.toMatchObject({ name: 'IdempotencyPayloadMismatchError', statusCode: 422 })
      await expect(handler({ headers: {}, body: '{}', requestContext: {} }, lambdaContext())).rejects.toMatchObject({ name: 'IdempotencyKeyError', statusCode: 400 })
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test('onOutcome is told completed, replayed, failed and no-key', async () => {
      const { store } = await makeStore()
      const kinds: string[] = []
      let fail = true
      const handler = middy<Event, unknown>()
        .use(idempotency({ store, key: 'orderId', logger: false, onOutcome: ({ kind }) => { kinds.push(kind) } }))
        .handler(async (event) => { if (event.orderId === 'bad' && fail) { fail = false; throw new Error('down') } return 'ok' })
      await handler({ orderId: 'good' }, lambdaContext())
      await handler({ orderId: 'good' }, lambdaContext())
      await handler({ orderId: 'bad' }, lambdaContext()).catch(() => {})
      await handler({}, lambdaContext()).catch(() => {})
      expect(kinds).toEqual(['completed', 'replayed', 'failed', 'no-key'])
    })

    test('the default key is the whole event, hashed', async () => {
      const { store } = await makeStore()
      const calls = jest.fn(async () => 'ok')
      const handler = middy<Event, unknown>().use(idempotency({ store, logger: false })).handler(calls)
      await handler({ orderId: 'a', amount: 1 }, lambdaContext())
      await handler({ amount: 1, orderId: 'a' }, lambdaContext())
      await handler({ orderId: 'a', amount: 2 }, lambdaContext())
      expect(calls).toHaveBeenCalledTimes(2)
    })
  })
}
