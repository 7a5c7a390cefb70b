import { describe, expect, jest, test } from '@jest/globals'
import {
  idempotency,
  IdempotencyFailedError,
  IdempotencyInProgressError,
  IdempotencyKeyError,
  IdempotencyPayloadMismatchError,
  IdempotencyResponseError,
  MemoryStore,
  type IdempotencyOptions
} from '../../../src/index.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'

type Event = { orderId?: string, amount?: number }

describe.each(middyVersions)('whole event with MemoryStore, %s', (_, middy) => {
  const build = (work: (event: Event) => Promise<unknown>, options: Partial<IdempotencyOptions> = {}) => {
    const store = options.store as MemoryStore | undefined ?? new MemoryStore()
    const calls = jest.fn(work)
    const handler = middy<Event, unknown>()
      .use(idempotency({ store, namespace: 'api', key: 'orderId', logger: recordingLogger(), ...options }))
      .handler(async (event) => await calls(event))
    return { handler, calls, store }
  }

  test('a new event runs and its record is COMPLETED with the response', async () => {
    const { handler, calls, store } = build(async (e) => ({ statusCode: 201, charged: e.amount }))
    expect(await handler({ orderId: 'o-1', amount: 5 }, lambdaContext())).toEqual({ statusCode: 201, charged: 5 })
    expect(calls).toHaveBeenCalledTimes(1)
    expect(store.records()).toEqual([expect.objectContaining({ status: 'COMPLETED', responseData: '{"statusCode":201,"charged":5}' })])
  })

  test('a duplicate returns the stored response without running the handler', async () => {
    const { handler, calls } = build(async () => ({ statusCode: 201 }))
    await handler({ orderId: 'o-1', amount: 5 }, lambdaContext())
    expect(await handler({ orderId: 'o-1', amount: 5 }, lambdaContext())).toEqual({ statusCode: 201 })
    expect(calls).toHaveBeenCalledTimes(1)
  })

  test('an undefined result is replayed as undefined, not re-run', async () => {
    const { handler, calls } = build(async () => undefined)
    await handler({ orderId: 'o-2' }, lambdaContext())
    expect(await handler({ orderId: 'o-2' }, lambdaContext())).toBeUndefined()
    expect(calls).toHaveBeenCalledTimes(1)
  })

  test('a duplicate while the first still runs is a 409 IdempotencyInProgressError', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    const { handler, store } = build(async () => { await gate; return 'done' })
    const first = handler({ orderId: 'o-3' }, lambdaContext())
    await expect(handler({ orderId: 'o-3' }, lambdaContext())).rejects.toMatchObject({ name: 'IdempotencyInProgressError', statusCode: 409 })
    expect(store.records()[0]?.status).toBe('IN_PROGRESS')
    release()
    expect(await first).toBe('done')
  })

  test('the same key with another payload is a 422 IdempotencyPayloadMismatchError and writes nothing', async () => {
    const { handler, store } = build(async () => 'ok')
    await handler({ orderId: 'o-4', amount: 1 }, lambdaContext())
    const before = store.records()
    const error = await handler({ orderId: 'o-4', amount: 2 }, lambdaContext()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IdempotencyPayloadMismatchError)
    expect((error as IdempotencyPayloadMismatchError).statusCode).toBe(422)
    expect(store.records()).toEqual(before)
  })

  test('an event without a key is an IdempotencyKeyError and the handler does not run', async () => {
    const { handler, calls, store } = build(async () => 'ok')
    await expect(handler({ amount: 1 }, lambdaContext())).rejects.toThrow(IdempotencyKeyError)
    expect(calls).not.toHaveBeenCalled()
    expect(store.records()).toEqual([])
  })

  test("a failure with 'delete' releases the record and the retry runs", async () => {
    let attempt = 0
    const { handler, store } = build(async () => { if (++attempt === 1) throw new Error('down'); return 'ok' })
    await expect(handler({ orderId: 'o-5' }, lambdaContext())).rejects.toThrow('down')
    expect(store.records()).toEqual([])
    expect(await handler({ orderId: 'o-5' }, lambdaContext())).toBe('ok')
  })

  test("a failure with 'fail' is replayed as IdempotencyFailedError", async () => {
    const { handler, calls } = build(async () => { throw new RangeError('limit') }, { onFailure: 'fail' })
    await expect(handler({ orderId: 'o-6' }, lambdaContext())).rejects.toThrow(RangeError)
    const replay = await handler({ orderId: 'o-6' }, lambdaContext()).catch((e: unknown) => e)
    expect(replay).toBeInstanceOf(IdempotencyFailedError)
    expect((replay as IdempotencyFailedError).storedError).toEqual({ name: 'RangeError', message: 'limit' })
    expect(calls).toHaveBeenCalledTimes(1)
  })

  test('a result that cannot be stored fails with IdempotencyResponseError and is kept FAILED', async () => {
    const { handler, store, calls } = build(async () => ({ id: 1n }))
    await expect(handler({ orderId: 'o-7' }, lambdaContext())).rejects.toThrow(IdempotencyResponseError)
    expect(store.records()[0]?.status).toBe('FAILED')
    await expect(handler({ orderId: 'o-7' }, lambdaContext())).rejects.toThrow(IdempotencyFailedError)
    expect(calls).toHaveBeenCalledTimes(1)
  })

  test('Middy early timeout keeps the lease: the record stays IN_PROGRESS', async () => {
    const store = new MemoryStore()
    const deadline = Date.now() + 200
    const handler = middy<Event, unknown>({ timeoutEarlyInMillis: 150 })
      .use(idempotency({ store, key: 'orderId', logger: false }))
      .handler(async () => await new Promise(() => {}))
    await expect(handler({ orderId: 'o-8' }, lambdaContext(() => deadline - Date.now()))).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(store.records()).toEqual([expect.objectContaining({ status: 'IN_PROGRESS' })])
  })

  test('the default key is the whole event, hashed', async () => {
    const store = new MemoryStore()
    const calls = jest.fn(async () => 'ok')
    const handler = middy<Event, unknown>().use(idempotency({ store, logger: false })).handler(calls)
    await handler({ orderId: 'a', amount: 1 }, lambdaContext())
    await handler({ amount: 1, orderId: 'a' }, lambdaContext())
    await handler({ orderId: 'a', amount: 2 }, lambdaContext())
    expect(calls).toHaveBeenCalledTimes(2)
  })
})

test('the in-progress error says which key and until when', () => {
  const error = new IdempotencyInProgressError('ns#abc', Date.UTC(2026, 0, 1))
  expect(error.message).toBe('key ns#abc is being processed by another invocation (its lease runs until 2026-01-01T00:00:00.000Z)')
  expect(error.key).toBe('ns#abc')
})
