import { expect, test } from '@jest/globals'
import { idempotency, IdempotencyInProgressError, MemoryStore } from '../../../src/index.js'
import { describeWholeEvent } from '../../support/contracts/whole-event.js'
import { middy5 } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'

describeWholeEvent('MemoryStore', async () => {
  const store = new MemoryStore()
  return { store, records: async () => store.records() }
})

test('the in-progress error says until when, and keeps the key out of its (exposed) message', () => {
  const error = new IdempotencyInProgressError('ns#abc', Date.UTC(2026, 0, 1))
  expect(error.message).toBe('this request is being processed by another invocation (its lease runs until 2026-01-01T00:00:00.000Z)')
  expect(error.key).toBe('ns#abc')
})

test('a stored lease end no date can hold (another version wrote it) is said as its number, not a RangeError', () => {
  const error = new IdempotencyInProgressError('ns#abc', Number.MAX_SAFE_INTEGER)
  expect(error.message).toBe('this request is being processed by another invocation (its lease runs until 9007199254740991)')
  expect(error.leaseExpiresAt).toBe(Number.MAX_SAFE_INTEGER)
})

test('on Middy 5, which cannot respond early with undefined, a duplicate of an undefined result is reported loudly', async () => {
  const store = new MemoryStore()
  const logger = recordingLogger()
  const handler = middy5<{ id: string }, unknown>().use(idempotency({ store, key: 'id', logger })).handler(async () => undefined)
  await handler({ id: 'a' }, lambdaContext())
  expect(logger.lines).toEqual([])
  await handler({ id: 'a' }, lambdaContext())
  expect(logger.lines).toEqual([{ level: 'error', entry: { message: expect.stringMatching(/Middy 5 ran the handler of a duplicate/) } }])
})
