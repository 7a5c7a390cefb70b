import { describe, expect, test } from '@jest/globals'
import { errorStatusOf, markReplayed, statusOf } from '../../../src/http/response.js'

/**
 * A statusCode is read as API Gateway's REST proxy integration reads it: a number, or a string of an integer
 * (AWS's own older Node.js blueprints answered `statusCode: '400'`).
 */
describe('the status of a response', () => {
  test('a number or a string of an integer is the status; anything else is no HTTP response', () => {
    expect([statusOf({ statusCode: 503 }), statusOf({ statusCode: '503' }), statusOf({ statusCode: '201' })]).toEqual([503, 503, 201])
    for (const statusCode of ['', ' 503', '503 ', '5e2', '503.0', '0x1F7', '-503', 'Service Unavailable', 503.5, NaN, null, true]) {
      expect(statusOf({ statusCode })).toBeUndefined()
    }
    expect([statusOf(undefined), statusOf('503'), statusOf([{ statusCode: 503 }]), statusOf({})]).toEqual([undefined, undefined, undefined, undefined])
  })

  test('an error status (4xx, 5xx) is one, given as a number or as a string', () => {
    expect([errorStatusOf({ statusCode: '503' }), errorStatusOf({ statusCode: '408' }), errorStatusOf({ statusCode: 500 })]).toEqual([503, 408, 500])
    expect([errorStatusOf({ statusCode: '201' }), errorStatusOf({ statusCode: 302 }), errorStatusOf({ statusCode: 'x' })]).toEqual([undefined, undefined, undefined])
  })
})

describe('a replayed response', () => {
  test('with a string statusCode it is marked Idempotent-Replayed, its statusCode kept as the handler gave it', () => {
    const stored = { statusCode: '201', headers: { 'Content-Type': 'application/json' }, multiValueHeaders: { 'Content-Type': ['application/json'] }, body: '{}' }
    expect(markReplayed(stored)).toEqual({
      statusCode: '201',
      headers: { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' },
      multiValueHeaders: { 'Content-Type': ['application/json'], 'Idempotent-Replayed': ['true'] },
      body: '{}'
    })
    expect(stored.headers).toEqual({ 'Content-Type': 'application/json' })
  })

  test('a response whose statusCode is no status is left as it is', () => {
    const odd = { statusCode: 'created', body: '{}' }
    expect(markReplayed(odd)).toBe(odd)
  })
})
