import { expect, test } from '@jest/globals'
import { keyProblem, lookalike } from '../../../../src/stores/operator/ownership.js'
import { storedKey } from '../../../../src/keys/selector.js'

test('the keys the middleware writes are ours: with a namespace, a tenant, or an empty namespace', () => {
  for (const key of [storedKey('orders', { id: 1 }), storedKey('orders', 'x', 'tenant a/b'), storedKey('', 'x')]) expect(keyProblem(key)).toBeUndefined()
})

test('a Powertools key is not ours, and is said to look like Powertools\'', () => {
  // As Powertools writes them: the function's name (and the wrapped function's), '#', the digest in base64.
  for (const key of ['orders-consumer#8NWQdf9mpKt1rARJTDgPjw==', 'orders-consumer.charge#LWQeXAx1ny+H9KpnM5cNNA==', '#LWQeXAx1ny+H9KpnM5cNNA==']) {
    expect(keyProblem(key)).toMatch(/^its key is not of the shape namespace#\[tenant#\]<sha256 in hex> \(it looks like a record of Powertools for AWS Lambda's idempotency utility/)
  }
})

test('any other key is not ours, and is not said to be anyone\'s', () => {
  for (const key of ['ns#plain', 'orders', `ns#${'A'.repeat(64)}`, `a#b#c#${'0'.repeat(64)}`]) expect(keyProblem(key)).toBe('its key is not of the shape namespace#[tenant#]<sha256 in hex>')
})

test('Powertools\' status words mark a record as looking like Powertools\'', () => {
  expect(lookalike('ns#x', 'INPROGRESS')).toMatch(/Powertools/)
  expect(lookalike('ns#x', 'EXPIRED')).toMatch(/Powertools/)
  expect(lookalike('ns#x', 'COMPLETED')).toBe('')
})
