import { describe, expect, jest, test } from '@jest/globals'
import { idempotency, IdempotencyConfigError, MemoryStore, type IdempotencyOptions } from '../../../src/index.js'
import { albEvent, httpApiEvent, restApiEvent } from '../../support/http.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

/** A Lambda authorizer (HTTP API, simple response) whose context names the user `userId`: no field the default knows. */
const withLambdaAuthorizer = (userId: string): unknown => {
  const event = httpApiEvent({ key: 'k-1' }) as unknown as { requestContext: Record<string, unknown> }
  event.requestContext.authorizer = { lambda: { userId, plan: 'pro' } }
  return event
}

/** ALB with OIDC authentication: the user is named in the x-amzn-oidc-identity header. */
const withAlbOidc = (sub: string): unknown => {
  const event = albEvent({ key: 'k-1' }) as unknown as { multiValueHeaders: Record<string, string[]> }
  event.multiValueHeaders['x-amzn-oidc-identity'] = [sub]
  event.multiValueHeaders['x-amzn-oidc-data'] = [`header.${Buffer.from(JSON.stringify({ sub })).toString('base64url')}.signature`]
  return event
}

describe.each(middyVersions)('HTTP callers, %s', (_name, middy) => {
  const build = (options: Partial<IdempotencyOptions> = {}) => {
    const calls = jest.fn(async (event: unknown) => ({ statusCode: 201, body: JSON.stringify({ for: (event as { note?: string }).note }) }))
    const handler = middy<unknown, unknown>().use(idempotency({ store: new MemoryStore(), namespace: 'api', logger: false, ...options })).handler(calls)
    return { calls, send: async (event: unknown) => await handler(event, lambdaContext()) as { statusCode: number, body: string } }
  }

  test('by default, two users behind a Lambda authorizer the default cannot read share one stored response per key', async () => {
    const { calls, send } = build()
    await send(withLambdaAuthorizer('alice'))
    await send(withLambdaAuthorizer('bob'))
    expect(calls).toHaveBeenCalledTimes(1)
  })

  test('with the caller option naming the user, the same Idempotency-Key from two users is two pieces of work; each user\'s retry replays their own', async () => {
    const caller = (event: unknown): string | undefined => (event as { requestContext?: { authorizer?: { lambda?: { userId?: string } } } }).requestContext?.authorizer?.lambda?.userId
    const { calls, send } = build({ caller })
    await send(withLambdaAuthorizer('alice'))
    await send(withLambdaAuthorizer('bob'))
    await send(withLambdaAuthorizer('alice'))
    expect(calls).toHaveBeenCalledTimes(2)
  })

  test('ALB OIDC users are told apart by default (x-amzn-oidc-identity)', async () => {
    const { calls, send } = build()
    await send(withAlbOidc('sub-alice'))
    await send(withAlbOidc('sub-bob'))
    await send(withAlbOidc('sub-alice'))
    expect(calls).toHaveBeenCalledTimes(2)
  })

  test('a REST API Lambda authorizer\'s principalId is read by default', async () => {
    const { calls, send } = build()
    await send(restApiEvent({ key: 'k-1', caller: 'alice' }))
    await send(restApiEvent({ key: 'k-1', caller: 'bob' }))
    expect(calls).toHaveBeenCalledTimes(2)
  })

  test('caller must be a function', () => {
    expect(() => idempotency({ store: new MemoryStore(), caller: 'userId' as never })).toThrow(new IdempotencyConfigError('idempotency: caller must be a function (event, context) => string | undefined'))
  })
})
