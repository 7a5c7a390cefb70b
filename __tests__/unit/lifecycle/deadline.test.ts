import { afterEach, describe, expect, jest, test } from '@jest/globals'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, IdempotencyStoreError, perRecord } from '../../../src/index.js'
import type { ClaimRecord } from '../../../src/store.js'
import type { LifecycleConfig } from '../../../src/lifecycle/config.js'
import { deadlineWithin, leaseFor, remainingMs, storeDeadline, withDeadline, withinDeadline } from '../../../src/lifecycle/deadline.js'
import { createLog } from '../../../src/observe/log.js'
import { MemoryStore } from '../../../src/stores/memory-store.js'
import { deferred } from '../../support/deferred.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

const config: LifecycleConfig = {
  store: new MemoryStore(), expiresAfterSeconds: 60, onFailure: 'delete', log: createLog(false, 'silent'), now: Date.now, clockSkewMs: 0
}

/** A store call that answers only when told to. */
const pendingCall = () => {
  let answer!: (value: string) => void
  let signal: AbortSignal | undefined
  const call = async (bound: { signal?: AbortSignal }): Promise<string> => { signal = bound.signal; return await new Promise<string>((resolve) => { answer = resolve }) }
  return { call, answer: (value: string) => { answer(value) }, signal: () => signal }
}

afterEach(() => { jest.useRealTimers() })

describe('storeDeadline', () => {
  test('without a Lambda context there is no deadline, and the config is the shared one', () => {
    expect(storeDeadline({}, 1000)).toBeUndefined()
    expect(withDeadline(config, storeDeadline(undefined, 1000))).toBe(config)
  })

  test('a call may wait until the deadline less the margin; inside the margin, half of what is left', () => {
    expect(storeDeadline(lambdaContext(3000), 1000)?.budgetMs()).toBe(2000)
    expect(storeDeadline(lambdaContext(900), 1000)?.budgetMs()).toBe(450)
    expect(storeDeadline(lambdaContext(0), 1000)?.budgetMs()).toBe(0)
    // Middy 7's durable mode keeps the Lambda context under lambdaContext.
    expect(storeDeadline({ lambdaContext: lambdaContext(5000) }, 1000)?.budgetMs()).toBe(4000)
  })

  test('each invocation has its own deadline: the shared config is never given one', () => {
    const a = withDeadline(config, storeDeadline(lambdaContext(3000), 1000))
    const b = withDeadline(config, storeDeadline(lambdaContext(10_000), 1000))
    expect([a.deadline?.budgetMs(), b.deadline?.budgetMs(), config.deadline]).toEqual([2000, 9000, undefined])
  })
})

describe('withinDeadline', () => {
  test('a call with no answer by the deadline is given up with an error naming the operation, the key and the wait, and its signal aborts', async () => {
    jest.useFakeTimers()
    const bounded = withDeadline(config, storeDeadline(lambdaContext(3000), 1000))
    const hung = pendingCall()
    const result = withinDeadline(bounded, 'complete', 'orders#k1', hung.call).catch((e: unknown) => e)
    await jest.advanceTimersByTimeAsync(2000)
    const error = await result
    expect(error).toBeInstanceOf(IdempotencyStoreError)
    expect(error).toMatchObject({ operation: 'complete', key: 'orders#k1', message: expect.stringMatching(/^complete of key orders#k1 did not answer within 2000 ms/) })
    expect(hung.signal()?.aborted).toBe(true)
    // Its late answer is nobody's: nothing throws, nothing is left waiting.
    hung.answer('late')
    expect(jest.getTimerCount()).toBe(0)
  })

  test('a call that answers in time leaves no timer behind', async () => {
    jest.useFakeTimers()
    const bounded = withDeadline(config, storeDeadline(lambdaContext(3000), 1000))
    const quick = pendingCall()
    const result = withinDeadline(bounded, 'claim', 'orders#k2', quick.call)
    quick.answer('answered')
    expect(await result).toBe('answered')
    expect(jest.getTimerCount()).toBe(0)
    expect(quick.signal()?.aborted).toBe(false)
  })

  test('a call that fails in time fails with its own error', async () => {
    const bounded = withDeadline(config, storeDeadline(lambdaContext(3000), 1000))
    await expect(withinDeadline(bounded, 'claim', 'orders#k3', async () => { throw new RangeError('refused') })).rejects.toThrow('refused')
  })

  test('without a deadline the call is made as it is, with no signal', async () => {
    const quick = pendingCall()
    const result = withinDeadline(config, 'read', 'orders#k4', quick.call)
    quick.answer('answered')
    expect(await result).toBe('answered')
    expect(quick.signal()).toBeUndefined()
  })
})

describe('a remaining time as a context may answer it', () => {
  const NOW = 1_800_000_000_000
  // Lambda's longest timeout: https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
  const MAX_MS = 900_000
  const answering = (value: unknown) => ({ getRemainingTimeInMillis: () => value })

  test.each([900_001, 2 ** 31, 3_000_000_000, Number.MAX_SAFE_INTEGER, Infinity])(
    'a remaining time of %p, above Lambda\'s 900 s maximum, is read as 900 s by the lease, the store budget and the deadline', (value) => {
      const context = answering(value)
      expect(remainingMs(context)).toBe(MAX_MS)
      expect(remainingMs({ lambdaContext: context })).toBe(MAX_MS)
      expect(leaseFor(context, () => NOW)).toEqual({ nowMs: NOW, until: NOW + MAX_MS })
      expect(storeDeadline(context, 1000)?.budgetMs()).toBe(MAX_MS - 1000)
      expect(deadlineWithin(context, 1000)).toBe(false)
    })

  test('a store call under a remaining time above 2^31-1 ms is not given up at once (setTimeout would fire after 1 ms)', async () => {
    jest.useFakeTimers()
    const bounded = withDeadline(config, storeDeadline(answering(3_000_000_000), 1000))
    const slow = pendingCall()
    const result = withinDeadline(bounded, 'claim', 'orders#k5', slow.call)
    await jest.advanceTimersByTimeAsync(60_000)
    expect(slow.signal()?.aborted).toBe(false)
    slow.answer('answered')
    expect(await result).toBe('answered')
    expect(jest.getTimerCount()).toBe(0)
  })

  test.each([NaN, '30000', undefined, null, {}])(
    'a remaining time of %p, not a number, is read as no Lambda context: no store deadline, the longest lease', (value) => {
      const context = answering(value)
      expect(remainingMs(context)).toBeUndefined()
      expect(remainingMs({ lambdaContext: context })).toBeUndefined()
      expect(storeDeadline(context, 1000)).toBeUndefined()
      expect(leaseFor(context, () => NOW)).toEqual({ nowMs: NOW, until: NOW + MAX_MS })
      expect(deadlineWithin(context, 1000)).toBe(false)
    })

  test('a remaining time of 0 or less stays a value: a lapsed lease, no budget, the deadline reached', () => {
    for (const value of [0, -5]) {
      const context = answering(value)
      expect(remainingMs(context)).toBe(value)
      expect(leaseFor(context, () => NOW)).toEqual({ nowMs: NOW, until: NOW })
      expect(storeDeadline(context, 1000)?.budgetMs()).toBe(0)
      expect(deadlineWithin(context, 0)).toBe(true)
    }
  })
})

describe('one middleware, concurrent invocations (Lambda Managed Instances)', () => {
  /** A MemoryStore whose claims wait for the test: the far invocation's (its lease is long) until opened, the near one's for ever. */
  class GatedClaims extends MemoryStore {
    readonly far = deferred<void>()
    override async claim (record: ClaimRecord, nowMs: number) {
      await (record.inProgressExpiry - nowMs > 30_000 ? this.far.promise : new Promise<never>(() => {}))
      return await super.claim(record, nowMs)
    }
  }

  test('each invocation is bounded by its own deadline: one near its end does not give up the other\'s calls', async () => {
    const store = new GatedClaims()
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'mi', logger: false, timeoutMarginMs: 1000 }))
      .handler(perRecord(async () => 'done'))
    const near = sqsRecord('near')
    const far = sqsRecord('far')
    const nearDeadline = Date.now() + 1500
    const farAnswer = handler(sqsEvent([far]), lambdaContext(60_000))
    // The near invocation's claim never answers: it is given up at its own deadline less the margin.
    expect(failedIds(await handler(sqsEvent([near]), lambdaContext(() => nearDeadline - Date.now())))).toEqual([near.messageId])
    // The far one, waiting on the same store through the same middleware, was not given up with it.
    store.far.resolve()
    expect(await farAnswer).toEqual({ batchItemFailures: [] })
    expect(store.records().map((r) => r.status)).toEqual(['COMPLETED'])
  })
})
