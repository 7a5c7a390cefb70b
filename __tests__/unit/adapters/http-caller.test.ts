import { describe, expect, jest, test } from '@jest/globals'
import { defaultEventKey } from '../../../src/adapters/http.js'
import { idempotency, IdempotencyConfigError, IdempotencyKeyError, MemoryStore, type IdempotencyOptions } from '../../../src/index.js'
import { albEvent, httpApiEvent, restApiEvent } from '../../support/http.js'
import { albOidcEvent, anonymousShapes, authenticatedShapes, identities, oidcHeaders, spoofHeaders } from '../../support/http-events.js'
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

  test('by default, two users behind a Lambda authorizer whose context names them its own way are told apart by the whole context', async () => {
    const { calls, send } = build()
    await send(withLambdaAuthorizer('alice'))
    await send(withLambdaAuthorizer('bob'))
    await send(withLambdaAuthorizer('alice'))
    expect(calls).toHaveBeenCalledTimes(2)
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

/** Who the default key names as the caller (its `caller` field), for events as AWS documents them. */
const callerIn = (event: unknown): unknown => (defaultEventKey(event) as { caller?: unknown }).caller

describe.each(authenticatedShapes.map((s) => [s.name, s] as const))('the default caller: %s', (_name, shape) => {
  test('is the field AWS set after authenticating the request', () => {
    expect(callerIn(shape.event('alice', { key: 'k-1' }))).toBe(shape.caller('alice'))
    expect(callerIn(shape.event('mallory', { key: 'k-1' }))).toBe(shape.caller('mallory'))
    expect(shape.caller('alice')).not.toBe(shape.caller('mallory'))
  })

  if (!shape.name.startsWith('ALB')) {
    test('is not changed by headers the client adds to pass for someone else (x-amzn-oidc-*, X-Amz-Tenant-Id)', () => {
      expect(callerIn(shape.event('mallory', { key: 'k-1', headers: spoofHeaders('alice', shape) }))).toBe(shape.caller('mallory'))
    })
  }
})

describe.each(anonymousShapes.map((s) => [s.name, s] as const))('no default caller: %s', (_name, shape) => {
  test('nothing authenticated names one, and neither sourceIp, an API key nor x-amzn-oidc-* headers make one', () => {
    expect(callerIn(shape.event('alice', { key: 'k-1' }))).toBeUndefined()
    if (!shape.name.startsWith('ALB')) expect(callerIn(shape.event('mallory', { key: 'k-1', headers: oidcHeaders('mallory') }))).toBeUndefined()
  })
})

describe('the default caller on an ALB', () => {
  test('is x-amzn-oidc-identity whatever its case, from headers or multiValueHeaders', () => {
    const event = albOidcEvent({ key: 'k-1', headers: { 'X-Amzn-Oidc-Identity': identities.alice.sub } }, undefined) as { headers: Record<string, string>, multiValueHeaders?: Record<string, string[]> }
    expect(callerIn(event)).toBe(identities.alice.sub)
    event.multiValueHeaders = Object.fromEntries(Object.entries(event.headers).map(([k, v]) => [k, [v]]))
    delete (event as { headers?: unknown }).headers
    expect(callerIn(event)).toBe(identities.alice.sub)
  })

  test('two different values name no one: the request is refused (400) rather than scoped to either', () => {
    const event = albOidcEvent({ key: 'k-1' }, undefined) as { multiValueHeaders?: Record<string, string[]> }
    event.multiValueHeaders = { 'idempotency-key': ['k-1'], 'x-amzn-oidc-identity': [identities.mallory.sub, identities.alice.sub] }
    expect(() => defaultEventKey(event)).toThrow(IdempotencyKeyError)
    expect(() => defaultEventKey(event)).toThrow(/x-amzn-oidc-identity header names more than one caller/)
  })

  test('the same value twice is one caller', () => {
    const event = albOidcEvent({ key: 'k-1' }, undefined) as { multiValueHeaders?: Record<string, string[]> }
    event.multiValueHeaders = { 'idempotency-key': ['k-1'], 'x-amzn-oidc-identity': [identities.alice.sub, identities.alice.sub] }
    expect(callerIn(event)).toBe(identities.alice.sub)
  })
})

describe('a Lambda authorizer of an HTTP API', () => {
  const withContext = (lambda: unknown): unknown => {
    const event = httpApiEvent({ key: 'k-1' }) as unknown as { requestContext: Record<string, unknown> }
    event.requestContext.authorizer = { lambda }
    return event
  }

  test('its context, in any order of its properties, is one caller', () => {
    expect(callerIn(withContext({ userId: 'alice', plan: 'pro' }))).toBe(callerIn(withContext({ plan: 'pro', userId: 'alice' })))
  })

  test('an empty context (a simple response without one) names no caller', () => {
    expect(callerIn(withContext({}))).toBeUndefined()
    expect(callerIn(withContext(null))).toBeUndefined()
  })
})
