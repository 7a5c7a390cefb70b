import { describe, expect, test } from '@jest/globals'
import { IdempotencyConfigError, idempotency, MemoryStore, perRecord } from '../../src/index.js'

describe('options a JavaScript caller misspells are refused, not ignored', () => {
  test('an unknown option names itself and the option it most likely means', () => {
    expect(() => idempotency({ store: new MemoryStore(), expiresAfterSecond: 60 } as never))
      .toThrow(new IdempotencyConfigError("idempotency: unknown option 'expiresAfterSecond' (did you mean 'expiresAfterSeconds'?)"))
    expect(() => idempotency({ store: new MemoryStore(), onfailure: 'fail' } as never))
      .toThrow(new IdempotencyConfigError("idempotency: unknown option 'onfailure' (did you mean 'onFailure'?)"))
  })

  test('an unknown option far from every known one lists them', () => {
    expect(() => idempotency({ store: new MemoryStore(), retries: 3 } as never)).toThrow(/^idempotency: unknown option 'retries' \(the options are store, key, payload, /)
  })

  test('perRecord\'s options too', () => {
    expect(() => perRecord(async () => 1, { concurency: 2 } as never)).toThrow(new IdempotencyConfigError("perRecord: unknown option 'concurency' (did you mean 'concurrency'?)"))
  })

  test('an option set to undefined is no mistake', () => {
    expect(() => idempotency({ store: new MemoryStore(), key: undefined })).not.toThrow()
  })
})

describe('a renamed option is refused with its new name, not taken for the old meaning', () => {
  const renamed = new IdempotencyConfigError("idempotency: option 'concurrency' is now 'maxStoreRequests' " +
    '(the most store requests at once); perRecord(fn, { concurrency }) bounds the records run at once')

  test('idempotency({ concurrency }) says the store bound is now maxStoreRequests, when the middleware is made', () => {
    expect(() => idempotency({ store: new MemoryStore(), concurrency: 10 } as never)).toThrow(renamed)
  })

  test('a custom store whose limits still say concurrency is refused, not run with another bound', () => {
    const store = Object.assign(new MemoryStore(), { limits: { concurrency: 5 } })
    expect(() => idempotency({ store })).toThrow(new IdempotencyConfigError(
      "idempotency: the store's limits.concurrency is now maxStoreRequests"))
  })

  test('a store that states both names, for either version, and limits this version does not know, is taken', () => {
    const limits = { maxResponseBytes: 1000, concurrency: 5, maxStoreRequests: 5, maxItemBytes: 400_000 }
    expect(() => idempotency({ store: Object.assign(new MemoryStore(), { limits }) })).not.toThrow()
  })

  test('the batch-only and event-only entries say so too', async () => {
    const batchOnly = await import('../../src/batch.js')
    const eventOnly = await import('../../src/event.js')
    expect(() => batchOnly.idempotency({ store: new MemoryStore(), concurrency: 10 } as never)).toThrow(renamed)
    expect(() => eventOnly.idempotency({ store: new MemoryStore(), concurrency: 10 } as never)).toThrow(renamed)
  })
})

test('DynamoDBStore refuses a misspelt option too', async () => {
  const { DynamoDBStore } = await import('../../src/dynamodb.js')
  expect(() => new DynamoDBStore({ tableName: 'T', tablename: 'U' } as never)).toThrow(new IdempotencyConfigError("DynamoDBStore: unknown option 'tablename' (did you mean 'tableName'?)"))
})

test('a misspelt required option is named as a slip, not as the required one missing: DynamoDBStore({ tablename }), RedisStore({ clinet })', async () => {
  const { DynamoDBStore } = await import('../../src/dynamodb.js')
  const { RedisStore } = await import('../../src/redis.js')
  expect(() => new DynamoDBStore({ tablename: 'IdempotencyStore' } as never)).toThrow(new IdempotencyConfigError("DynamoDBStore: unknown option 'tablename' (did you mean 'tableName'?)"))
  expect(() => new RedisStore({ clinet: { sendCommand: async () => null } } as never)).toThrow(new IdempotencyConfigError("RedisStore: unknown option 'clinet' (did you mean 'client'?)"))
})

test('a missing store names every store the package has', () => {
  expect(() => idempotency({} as never)).toThrow(new IdempotencyConfigError('idempotency: store is required and must implement claim, complete, fail and release (a DynamoDBStore, a RedisStore or a MemoryStore)'))
})

test('a malformed key or payload path is named once, with where it goes wrong', () => {
  expect(() => idempotency({ store: new MemoryStore(), key: 'body..orderId' })).toThrow(new IdempotencyConfigError('idempotency: key path "body..orderId" is malformed at character 4'))
  expect(() => idempotency({ store: new MemoryStore(), payload: '$.' })).toThrow(new IdempotencyConfigError('idempotency: payload path "$." names nothing'))
})

test("a store's own maxStoreRequests is the default, and the option still decides", async () => {
  const { RedisStore } = await import('../../src/redis.js')
  const { resolveOptions } = await import('../../src/options.js')
  const store = new RedisStore({ client: { sendCommand: async () => null } })
  expect(resolveOptions({ store }).maxStoreRequests).toBe(1000)
  expect(resolveOptions({ store, maxStoreRequests: 7 }).maxStoreRequests).toBe(7)
  expect(resolveOptions({ store: new MemoryStore() }).maxStoreRequests).toBe(50)
})

test("perRecord does not take a store's larger request bound as its own: with no option, at most 50 records run at once", async () => {
  const { default: middy } = await import('@middy/core')
  const { sqsEvent, sqsRecord, lambdaContext } = await import('../support/sqs.js')
  const records = Array.from({ length: 120 }, (_, i) => sqsRecord({ n: i }))
  // A store that takes 1,000 requests at once (as RedisStore states), in memory.
  const limits = { maxResponseBytes: 1024 * 1024, maxReadKeys: 1000, maxStoreRequests: 1000 }
  const store = new MemoryStore({ limits })
  let running = 0
  let most = 0
  const handler = middy().use(idempotency({ store, logger: false })).handler(perRecord(async () => {
    most = Math.max(most, ++running)
    await new Promise((resolve) => setImmediate(resolve))
    running--
  }) as never)
  await (handler as unknown as (e: unknown, c: unknown) => Promise<unknown>)(sqsEvent(records), lambdaContext())
  expect(most).toBe(50)
})

describe('options that would scope keys wrongly are refused when the middleware is made', () => {
  test('a namespace holding # (it would read as another namespace\'s tenant)', () => {
    expect(() => idempotency({ store: new MemoryStore(), namespace: 'orders#acme' })).toThrow(IdempotencyConfigError)
    expect(() => idempotency({ store: new MemoryStore(), namespace: 'orders#acme' })).toThrow(/namespace must not contain '#'/)
  })

  test('caller with a key option: caller scopes only the default HTTP key', () => {
    expect(() => idempotency({ store: new MemoryStore(), key: 'headers.idempotency-key', caller: () => 'alice' }))
      .toThrow(new IdempotencyConfigError('idempotency: caller scopes only the default HTTP key; with your own key option, put the caller in the key'))
  })
})
