import { afterEach, expect, test } from '@jest/globals'
import { makeIdempotent, IdempotencyConfigError, IdempotencyKeyError, MemoryStore } from '../../../src/index.js'
import { describeMakeIdempotent } from '../../support/contracts/make-idempotent.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'

describeMakeIdempotent('MemoryStore', async () => {
  const store = new MemoryStore()
  return { store, records: async (namespace) => store.records().filter((r) => r.key.startsWith(`${namespace}#`)) }
})

const store = new MemoryStore()

test('a misspelt option is refused with the nearest name', () => {
  expect(() => makeIdempotent(async () => 1, { store, leaseSecond: 5 } as never)).toThrow(new IdempotencyConfigError("makeIdempotent: unknown option 'leaseSecond' (did you mean 'leaseSeconds'?)"))
  // A middleware option that means nothing for a function call.
  expect(() => makeIdempotent(async () => 1, { store, mode: 'sqs' } as never)).toThrow(/makeIdempotent: unknown option 'mode'/)
})

test('bad options are named, under makeIdempotent', () => {
  expect(() => makeIdempotent(async () => 1, { store: {} as never })).toThrow(/^makeIdempotent: store is required/)
  expect(() => makeIdempotent(async () => 1, { store, expiresAfterSeconds: 0 })).toThrow('makeIdempotent: expiresAfterSeconds must be a positive integer')
  expect(() => makeIdempotent(async () => 1, { store, leaseSeconds: -1 })).toThrow('makeIdempotent: leaseSeconds must be a positive number')
  expect(() => makeIdempotent(async () => 1, { store, key: 'a..b' })).toThrow(/^makeIdempotent: key path "a\.\.b" is malformed at character 1/)
  expect(() => makeIdempotent('nope' as never, { store })).toThrow('makeIdempotent: fn must be a function')
})

test('with a Lambda context and a shorter leaseSeconds, the lease is the shorter', async () => {
  const nowMs = 1_000_000
  const own = new MemoryStore()
  let seen: number | undefined
  const fn = makeIdempotent(async (_e: { id: string }, _c: unknown) => { seen = own.records()[0]?.inProgressExpiry }, { store: own, key: 'id', leaseSeconds: 5, logger: false, now: () => nowMs })
  await fn({ id: 'a' }, lambdaContext(60_000))
  expect(seen).toBe(nowMs + 5_000)
})

test("a durable execution's context (the Lambda context as lambdaContext) gives the lease too", async () => {
  const nowMs = 1_000_000
  const own = new MemoryStore()
  let seen: number | undefined
  const fn = makeIdempotent(async (_e: { id: string }, _c: unknown) => { seen = own.records()[0]?.inProgressExpiry }, { store: own, key: 'id', logger: false, now: () => nowMs })
  await fn({ id: 'a' }, { lambdaContext: lambdaContext(7_000) })
  expect(seen).toBe(nowMs + 7_000)
})

test('a context whose two tenants disagree (context.tenantId, context.lambdaContext.tenantId) rejects with IdempotencyKeyError: fn not run, nothing stored', async () => {
  const own = new MemoryStore()
  let runs = 0
  const fn = makeIdempotent(async (_e: { id: string }, _c: unknown) => ++runs, { store: own, key: 'id', logger: false })
  const context = { tenantId: 'acme', lambdaContext: { ...lambdaContext(7_000), tenantId: 'globex' } }
  await expect(fn({ id: 'a' }, context)).rejects.toThrow(new IdempotencyKeyError('function call: context.tenantId ("acme") and context.lambdaContext.tenantId ("globex") name two tenants: the key cannot be scoped to its tenant'))
  expect(runs).toBe(0)
  expect(own.records()).toEqual([])
})

test('a failure at the deadline keeps the lease (the work may have taken effect): not released, not failed', async () => {
  const own = new MemoryStore()
  const fn = makeIdempotent(async (_e: { id: string }, _c: unknown) => { throw new Error('socket hang up') }, { store: own, key: 'id', onFailure: 'fail', logger: false })
  await expect(fn({ id: 'a' }, lambdaContext(500))).rejects.toThrow('socket hang up')
  expect(own.records()).toEqual([expect.objectContaining({ status: 'IN_PROGRESS' })])
})

test('a result that cannot be stored fails the call and keeps the record FAILED (never a silent success)', async () => {
  const own = new MemoryStore()
  const fn = makeIdempotent(async (_e: { id: string }) => ({ big: 1n }), { store: own, key: 'id', logger: false })
  await expect(fn({ id: 'a' })).rejects.toThrow(/BigInt/)
  expect(own.records()).toEqual([expect.objectContaining({ status: 'FAILED' })])
})

const savedEnv = { ...process.env }
afterEach(() => { process.env = { ...savedEnv } })

test('MIDDY_IDEMPOTENCY_DISABLED=true off Lambda runs every call, stores nothing, and warns each time', async () => {
  delete process.env.AWS_LAMBDA_FUNCTION_NAME
  process.env.MIDDY_IDEMPOTENCY_DISABLED = 'true'
  const own = new MemoryStore()
  const logger = recordingLogger()
  let runs = 0
  const fn = makeIdempotent(async (_e: { id: string }) => ++runs, { store: own, key: 'id', logger })
  expect(await fn({ id: 'a' })).toBe(1)
  expect(await fn({ id: 'a' })).toBe(2)
  expect(own.records()).toEqual([])
  expect(logger.lines).toEqual([1, 2].map(() => ({ level: 'warn', entry: { message: expect.stringMatching(/DISABLED by MIDDY_IDEMPOTENCY_DISABLED/) } })))
})

test('a Lambda context answering a remaining time above 900 s gives a lease of 900 s, Lambda\'s longest timeout', async () => {
  const nowMs = 1_000_000
  const own = new MemoryStore()
  let seen: number | undefined
  const fn = makeIdempotent(async (_e: { id: string }, _c: unknown) => { seen = own.records()[0]?.inProgressExpiry }, { store: own, key: 'id', logger: false, now: () => nowMs })
  await fn({ id: 'a' }, lambdaContext(Number.MAX_SAFE_INTEGER))
  expect(seen).toBe(nowMs + 900_000)
})

test('a Lambda context answering NaN is still the Lambda context: its tenant scopes the key, the lease is leaseSeconds', async () => {
  const nowMs = 1_000_000
  const own = new MemoryStore()
  const fn = makeIdempotent(async (_e: { id: string }, _c: unknown) =>
    own.records().filter((r) => r.status === 'IN_PROGRESS').map((r) => r.inProgressExpiry), { store: own, key: 'id', leaseSeconds: 5, logger: false, now: () => nowMs })
  const tenant = (tenantId: string) => ({ ...lambdaContext(NaN), tenantId })
  expect(await fn({ id: 'a' }, tenant('acme'))).toEqual([nowMs + 5_000])
  // Another tenant's call with the same id is not the first's duplicate.
  expect(await fn({ id: 'a' }, tenant('globex'))).toEqual([nowMs + 5_000])
  expect(own.records().map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED'])
})
