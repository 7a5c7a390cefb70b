import { describe, expect, test } from '@jest/globals'
import type { MiddyRequest } from '../../../src/types.js'
import { originalError, timedOut, watchErrors } from '../../../src/lifecycle/deadline.js'
import { lambdaContext } from '../../support/sqs.js'

/** A request as Middy makes it: `error` is a plain data property, `undefined` at first. */
const request = (context: unknown = lambdaContext()): MiddyRequest => ({ event: {}, context, response: undefined, error: undefined })

const middyTimeout = (): Error => {
  const error = new Error('[AbortError]: The operation was aborted.', { cause: { package: '@middy/core' } })
  error.name = 'TimeoutError'
  return error
}

describe('watchErrors and originalError', () => {
  test('the first error assigned is kept; reading request.error still gives the latest', () => {
    const r = request()
    watchErrors(r)
    const thrown = new Error('card declined')
    r.error = thrown
    r.error = { statusCode: 500, message: undefined, expose: true } // what http-error-handler does
    expect(r.error).toEqual({ statusCode: 500, message: undefined, expose: true })
    expect(originalError(r)).toBe(thrown)
    expect(Object.keys(r)).toContain('error')
  })

  test('an error assigned before watching counts as the first; without any, request.error is the answer', () => {
    const early = request()
    early.error = 'early'
    watchErrors(early)
    early.error = 'later'
    expect(originalError(early)).toBe('early')
    const untouched = request()
    expect(originalError(untouched)).toBeUndefined()
    untouched.error = 'unwatched'
    expect(originalError(untouched)).toBe('unwatched')
  })

  test('watching twice keeps the first error', () => {
    const r = request()
    watchErrors(r)
    r.error = 'first'
    watchErrors(r)
    r.error = 'second'
    expect(originalError(r)).toBe('first')
  })
})

describe('timedOut', () => {
  test("Middy's TimeoutError counts even when a later middleware replaced it, however much time is left", () => {
    const r = request(lambdaContext(60_000))
    watchErrors(r)
    r.error = middyTimeout()
    r.error = { statusCode: 500 }
    expect(timedOut(r, 1000)).toBe(true)
  })

  test('an error of another name, or from another package, is not a timeout by itself', () => {
    const r = request(lambdaContext(60_000))
    watchErrors(r)
    r.error = Object.assign(new Error('x', { cause: { package: 'mine' } }), { name: 'TimeoutError' })
    expect(timedOut(r, 1000)).toBe(false)
  })

  test('any failure with marginMs or less left is a timeout, measured on the Lambda context (or Middy 7 lambdaContext)', () => {
    expect(timedOut(request(lambdaContext(1000)), 1000)).toBe(true)
    expect(timedOut(request(lambdaContext(1001)), 1000)).toBe(false)
    expect(timedOut(request({ lambdaContext: lambdaContext(200) }), 1000)).toBe(true)
    expect(timedOut(request({ lambdaContext: lambdaContext(5000) }), 1000)).toBe(false)
  })

  test('without a Lambda context there is no deadline: only the error counts', () => {
    expect(timedOut(request({}), 1000)).toBe(false)
    expect(timedOut(request(undefined), 1000)).toBe(false)
  })
})
