import { describe, expect, it } from '@jest/globals'
import { DURABLE_ESM_EXECUTION_MAX_MS, DURABLE_EXECUTION_MAX_MS, durableExecutionOf, nthClaim, ownerToken } from '../../../src/lifecycle/durable.js'
import { leaseFor } from '../../../src/lifecycle/deadline.js'

const arn = 'arn:aws:lambda:eu-west-1:123456789012:function:pay:$LATEST/durable-execution/run-1/0a1b'
const durableContext = {
  executionContext: { durableExecutionArn: arn },
  lambdaContext: { getRemainingTimeInMillis: () => 2_000 }
}

describe('durable executions', () => {
  it('names the execution of a durable context, and none of a plain Lambda context', () => {
    expect(durableExecutionOf(durableContext)).toBe(arn)
    expect(durableExecutionOf({ getRemainingTimeInMillis: () => 1 })).toBeUndefined()
    expect(durableExecutionOf(undefined)).toBeUndefined()
  })

  it('gives an execution the same token on a key in every invocation, another execution or key another, each fit for a ClientRequestToken', () => {
    const token = ownerToken(arn, 'pay#a')
    expect(ownerToken(arn, 'pay#a')).toBe(token)
    expect(ownerToken(`${arn}x`, 'pay#a')).not.toBe(token)
    expect(ownerToken(arn, 'pay#b')).not.toBe(token)
    expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  })

  it('leases for as long as the execution may run, not the invocation\'s remaining time, held by the execution', () => {
    expect(leaseFor(durableContext, () => 1_000)).toEqual({ nowMs: 1_000, until: 1_000 + DURABLE_EXECUTION_MAX_MS, owner: arn, invocation: durableContext.lambdaContext })
    expect(leaseFor(durableContext.lambdaContext, () => 1_000)).toEqual({ nowMs: 1_000, until: 3_000 })
  })

  it('leases a batch of an event source mapping for as long as such an execution may run (90 minutes at most), not a year', () => {
    expect(DURABLE_ESM_EXECUTION_MAX_MS).toBe(90 * 60 * 1000)
    expect(leaseFor(durableContext, () => 1_000, 'event-source-mapping')).toEqual({ nowMs: 1_000, until: 1_000 + DURABLE_ESM_EXECUTION_MAX_MS, owner: arn, invocation: durableContext.lambdaContext })
  })
  it('tells apart the calls of one execution on one key by their rank in the invocation: each its own token, the first the token earlier versions gave', () => {
    expect(ownerToken(arn, 'pay#a', 1)).toBe(ownerToken(arn, 'pay#a'))
    expect(new Set([1, 2, 3].map((nth) => ownerToken(arn, 'pay#a', nth))).size).toBe(3)
    expect(ownerToken(arn, 'pay#a', 2)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  })

  it('ranks the claims of one invocation per key, from 1; another invocation counts from 1 again', () => {
    const first = {}
    const replay = {}
    expect([nthClaim(first, 'pay#a'), nthClaim(first, 'pay#b'), nthClaim(first, 'pay#a')]).toEqual([1, 1, 2])
    expect([nthClaim(replay, 'pay#a'), nthClaim(replay, 'pay#a')]).toEqual([1, 2])
  })
})
