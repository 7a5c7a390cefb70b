import { expect, test } from '@jest/globals'
import { TimeoutError } from '@redis/client/dist/lib/errors.js'
import { errorMessage, errorName, errorText } from '../../src/error-text.js'
import { asStoreError } from '../../src/lifecycle/stored-error.js'
import { errorFields } from '../../src/observe/log.js'

test('an error with no message is named by its class (node-redis\'s TimeoutError sets no name of its own)', () => {
  const error = new TimeoutError()
  expect([error.name, error.message]).toEqual(['Error', ''])
  expect(errorName(error)).toBe('TimeoutError')
  expect(errorMessage(error)).toBe('TimeoutError (no message)')
  expect(errorText(error)).toBe('TimeoutError (no message)')
  expect(asStoreError(error, 'claim', 'orders#k').message).toBe('claim of key orders#k failed: TimeoutError (no message)')
  expect(errorFields(error)).toEqual({ name: 'TimeoutError', message: 'TimeoutError (no message)' })
})

test('an error with a message keeps its words', () => {
  expect(errorText(new RangeError('too big'))).toBe('RangeError: too big')
  expect(errorText(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }))).toBe('ThrottlingException: throttled')
  expect(asStoreError(new Error('socket hang up'), 'complete', 'orders#k').message).toBe('complete of key orders#k failed: socket hang up')
  expect(errorMessage('a string')).toBe('a string')
})
