import { afterEach, expect, test } from '@jest/globals'
import middy from '@middy/core'
import { idempotency, makeIdempotent, MemoryStore } from '../../src/index.js'
import { lambdaContext, recordingLogger } from '../support/sqs.js'

const savedEnv = { ...process.env }
afterEach(() => { process.env = { ...savedEnv } })

const localRun = (): void => {
  delete process.env.AWS_LAMBDA_FUNCTION_NAME
  delete process.env.AWS_SAM_LOCAL
  delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE
  process.env.MIDDY_IDEMPOTENCY_DISABLED = 'true'
}

test('off Lambda, MIDDY_IDEMPOTENCY_DISABLED=true turns the middleware off: every invocation runs, nothing is stored, each one warns', async () => {
  localRun()
  const store = new MemoryStore()
  const logger = recordingLogger()
  let runs = 0
  const handler = middy<{ id: string }, number>().use(idempotency({ store, key: 'id', logger })).handler(async () => ++runs)
  expect(await handler({ id: 'a' }, lambdaContext())).toBe(1)
  expect(await handler({ id: 'a' }, lambdaContext())).toBe(2)
  expect(store.records()).toEqual([])
  expect(logger.lines).toEqual([1, 2].map(() => ({ level: 'warn', entry: { message: expect.stringMatching(/DISABLED by MIDDY_IDEMPOTENCY_DISABLED/) } })))
})

test('in SAM local (AWS_SAM_LOCAL=true beside the function name) the switch is honoured', async () => {
  localRun()
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'orders'
  process.env.AWS_SAM_LOCAL = 'true'
  const store = new MemoryStore()
  const handler = middy<{ id: string }, number>().use(idempotency({ store, key: 'id', logger: false })).handler(async () => 1)
  await handler({ id: 'a' }, lambdaContext())
  expect(store.records()).toEqual([])
})

test('in AWS Lambda the switch is refused: idempotency stays on, and every invocation logs the refusal', async () => {
  localRun()
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'orders'
  const store = new MemoryStore()
  const logger = recordingLogger()
  let runs = 0
  const handler = middy<{ id: string }, number>().use(idempotency({ store, key: 'id', logger })).handler(async () => ++runs)
  expect(await handler({ id: 'a' }, lambdaContext())).toBe(1)
  expect(await handler({ id: 'a' }, lambdaContext())).toBe(1)
  expect(runs).toBe(1)
  expect(store.records()).toEqual([expect.objectContaining({ status: 'COMPLETED' })])
  expect(logger.lines).toEqual([1, 2].map(() => ({ level: 'error', entry: { message: expect.stringMatching(/MIDDY_IDEMPOTENCY_DISABLED is ignored in AWS Lambda/) } })))

  let calls = 0
  const fn = makeIdempotent(async (_e: { id: string }) => ++calls, { store, key: 'id', logger: false })
  await fn({ id: 'b' })
  await fn({ id: 'b' })
  expect(calls).toBe(1)
})

test.each(['false', '0', ''])('MIDDY_IDEMPOTENCY_DISABLED=%j leaves idempotency on, quietly', async (value) => {
  localRun()
  process.env.MIDDY_IDEMPOTENCY_DISABLED = value
  const store = new MemoryStore()
  const logger = recordingLogger()
  const handler = middy<{ id: string }, number>().use(idempotency({ store, key: 'id', logger })).handler(async () => 1)
  await handler({ id: 'a' }, lambdaContext())
  expect(store.records()).toHaveLength(1)
  expect(logger.lines).toEqual([])
})

test.each(['yes', 'on', 'disabled'])('MIDDY_IDEMPOTENCY_DISABLED=%j is not recognised: idempotency stays on, and the value is named in a warning', async (value) => {
  localRun()
  process.env.MIDDY_IDEMPOTENCY_DISABLED = value
  const store = new MemoryStore()
  const logger = recordingLogger()
  const handler = middy<{ id: string }, number>().use(idempotency({ store, key: 'id', logger })).handler(async () => 1)
  await handler({ id: 'a' }, lambdaContext())
  expect(store.records()).toHaveLength(1)
  expect(logger.lines).toEqual([{ level: 'warn', entry: { message: expect.stringContaining(`MIDDY_IDEMPOTENCY_DISABLED=${JSON.stringify(value)} is not recognised (true or 1 turns idempotency off; false or 0 leaves it on): idempotency stays on`) } }])
})

test('a deployed function with AWS_SAM_LOCAL=true copied into its configuration still refuses the switch: Lambda itself sets AWS_LAMBDA_INITIALIZATION_TYPE', async () => {
  localRun()
  // What a real execution environment has: the reserved variables Lambda sets, and the two copied from a local setup.
  Object.assign(process.env, { AWS_LAMBDA_FUNCTION_NAME: 'orders', AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand', AWS_SAM_LOCAL: 'true' })
  const store = new MemoryStore()
  const logger = recordingLogger()
  let runs = 0
  const handler = middy<{ id: string }, number>().use(idempotency({ store, key: 'id', logger })).handler(async () => ++runs)
  await handler({ id: 'a' }, lambdaContext())
  await handler({ id: 'a' }, lambdaContext())
  expect(runs).toBe(1)
  expect(logger.lines).toEqual([1, 2].map(() => ({ level: 'error', entry: { message: expect.stringMatching(/MIDDY_IDEMPOTENCY_DISABLED is ignored in AWS Lambda/) } })))
})
