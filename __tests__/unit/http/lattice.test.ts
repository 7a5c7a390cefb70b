import { describe, expect, test } from '@jest/globals'
import { defaultEventKey, httpRequestOf, isHttpEvent } from '../../../src/http/request.js'
import { isLatticeV1, isLatticeV2 } from '../../../src/http/lattice.js'
import { functionUrlEvent, httpApiEvent, latticeV1Event, latticeV2Event } from '../../support/http.js'

/** VPC Lattice events as its user guide documents them: https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html */
describe('recognising VPC Lattice events', () => {
  test('v1 (snake_case, no requestContext) and v2 (version 2.0, method and path, the service in requestContext) are HTTP requests', () => {
    expect(isLatticeV1(latticeV1Event({}))).toBe(true)
    expect(isLatticeV2(latticeV2Event({}))).toBe(true)
    expect(httpRequestOf(latticeV1Event({ method: 'patch', path: '/orders/1' }))).toEqual({ method: 'PATCH', path: '/orders/1' })
    expect(httpRequestOf(latticeV2Event({ method: 'post', path: '/orders' }))).toEqual({ method: 'POST', path: '/orders' })
  })

  test('an HTTP API or function URL event (also version 2.0) is not taken for Lattice, nor a 2.0 event without a target group', () => {
    expect(isLatticeV2(httpApiEvent({}))).toBe(false)
    expect(isLatticeV2(functionUrlEvent({}))).toBe(false)
    expect(isLatticeV2({ version: '2.0', method: 'POST', path: '/x', requestContext: { serviceArn: 'arn:aws:vpc-lattice:us-east-1:123456789012:service/svc-1' } })).toBe(false)
    expect(isHttpEvent({ version: '2.0', method: 'POST', path: '/x' })).toBe(false)
  })

  test('the default key: the header, method, path and query; v2 adds the service and the IAM principal, never the time', () => {
    expect(defaultEventKey(latticeV1Event({ key: 'k-1', query: { b: '2', a: '1' } })))
      .toEqual({ method: 'POST', path: '/orders', query: [['a', '1'], ['b', '2']], idempotencyKey: 'k-1' })
    expect(defaultEventKey(latticeV2Event({ key: 'k-1', caller: 'alice' }))).toEqual({
      service: 'arn:aws:vpc-lattice:us-east-1:123456789012:service/svc-0a40eebed65f8d69c',
      method: 'POST',
      path: '/orders',
      caller: 'iam:arn:aws:sts::123456789012:assumed-role/orders-client/alice',
      idempotencyKey: 'k-1'
    })
    expect(defaultEventKey(latticeV2Event({ key: 'k-1' }))).not.toHaveProperty('caller')
  })
})
