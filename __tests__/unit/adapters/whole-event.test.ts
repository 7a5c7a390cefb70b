import { expect, test } from '@jest/globals'
import { IdempotencyInProgressError, MemoryStore } from '../../../src/index.js'
import { describeWholeEvent } from '../../support/contracts/whole-event.js'

describeWholeEvent('MemoryStore', async () => {
  const store = new MemoryStore()
  return { store, records: async () => store.records() }
})

test('the in-progress error says until when, and keeps the key out of its (exposed) message', () => {
  const error = new IdempotencyInProgressError('ns#abc', Date.UTC(2026, 0, 1))
  expect(error.message).toBe('this request is being processed by another invocation (its lease runs until 2026-01-01T00:00:00.000Z)')
  expect(error.key).toBe('ns#abc')
})
