import { describe, expect, jest, test } from '@jest/globals'
import middy from '@middy/core'
import { defaultEventKey } from '../../../src/http/request.js'
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
    expect(callerIn(event)).toBe(`alb-oidc:${identities.alice.sub}`)
    event.multiValueHeaders = Object.fromEntries(Object.entries(event.headers).map(([k, v]) => [k, [v]]))
    delete (event as { headers?: unknown }).headers
    expect(callerIn(event)).toBe(`alb-oidc:${identities.alice.sub}`)
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
    expect(callerIn(event)).toBe(`alb-oidc:${identities.alice.sub}`)
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

/** A REST API (payload 1.0) event with this `requestContext.authorizer` and `requestContext.identity`. */
const restWith = (o: { authorizer?: Record<string, unknown>, identity?: Record<string, unknown>, stage?: string, apiId?: string }): unknown => {
  const event = restApiEvent({ key: 'k-1' }) as unknown as { requestContext: Record<string, unknown> }
  if (o.authorizer !== undefined) event.requestContext.authorizer = o.authorizer
  if (o.identity !== undefined) event.requestContext.identity = o.identity
  event.requestContext.apiId = o.apiId ?? '1234567890'
  if (o.stage !== undefined) event.requestContext.stage = o.stage
  return event
}

/** An HTTP API (payload 2.0) event with this `requestContext.authorizer`. */
const v2With = (authorizer: Record<string, unknown> | undefined, o: { apiId?: string, stage?: string } = {}): unknown => {
  const event = httpApiEvent({ key: 'k-1' }) as unknown as { requestContext: Record<string, unknown> }
  if (authorizer !== undefined) event.requestContext.authorizer = authorizer
  event.requestContext.apiId = o.apiId ?? 'r3pmxmplak'
  event.requestContext.stage = o.stage ?? '$default'
  return event
}

describe('a REST API Lambda authorizer returning one principalId for everyone (AWS\'s own examples return \'user\')', () => {
  // API Gateway flattens the authorizer's context next to principalId, and adds integrationLatency itself.
  const asUser = (userId: string, integrationLatency = 12): unknown => restWith({ authorizer: { principalId: 'user', integrationLatency, userId, stringKey: 'value', numberKey: '1', booleanKey: 'true' } })

  test('the caller is the principalId and the context together: two users it tells apart by context are two callers', () => {
    expect(callerIn(asUser('alice'))).toBe('lambda:{"booleanKey":"true","numberKey":"1","principalId":"user","stringKey":"value","userId":"alice"}')
    expect(callerIn(asUser('mallory'))).not.toBe(callerIn(asUser('alice')))
  })

  test('what API Gateway adds per request (integrationLatency, 0 when cached, and the other authorizer values it documents) is not part of the caller: a retry meets the first request', () => {
    expect(callerIn(asUser('alice', 0))).toBe(callerIn(asUser('alice', 412)))
    const withAll = restWith({ authorizer: { principalId: 'user', userId: 'alice', integrationLatency: 3, integrationStatus: '200', latency: 5, requestId: 'r-2', status: '200', error: '' } })
    expect(callerIn(withAll)).toBe('lambda:{"principalId":"user","userId":"alice"}')
  })

  test('end to end: Mallory, sending Alice\'s Idempotency-Key, runs as herself and never gets Alice\'s response or session cookie', async () => {
    let sender = '?'
    const calls = jest.fn(async () => ({ statusCode: 201, headers: { 'set-cookie': `session=${sender}-secret` }, body: JSON.stringify({ chargedFor: sender }) }))
    const handler = middy<unknown, unknown>().use(idempotency({ store: new MemoryStore(), namespace: 'orders', logger: false })).handler(calls)
    sender = 'alice'
    await handler(asUser('alice'), lambdaContext())
    sender = 'mallory'
    const theirs = await handler(asUser('mallory'), lambdaContext()) as { headers: Record<string, string>, body: string }
    expect(theirs.body).toBe('{"chargedFor":"mallory"}')
    expect(theirs.headers['set-cookie']).toBe('session=mallory-secret')
    expect(calls).toHaveBeenCalledTimes(2)
  })
})

describe('IAM auth through one role shared by many people (IAM Identity Center, SAML): the session names the person', () => {
  const sso = (who: string): string => `arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_OrdersOperator_0123456789abcdef/${who}@example.com`

  test('REST API: two users of one permission set are two callers, each the whole assumed-role ARN', () => {
    const as = (who: string): unknown => restWith({ identity: { accessKey: 'ASIAEXAMPLE', accountId: '111122223333', caller: `AROAEXAMPLEROLEID0001:${who}@example.com`, user: `AROAEXAMPLEROLEID0001:${who}@example.com`, userArn: sso(who), cognitoIdentityId: null } })
    expect(callerIn(as('alice'))).toBe(`iam:${sso('alice')}`)
    expect(callerIn(as('bob'))).toBe(`iam:${sso('bob')}`)
  })

  test('HTTP API and function URL: the same', () => {
    for (const apiId of ['r3pmxmplak', 'a1b2c3d4e5f6']) {
      const as = (who: string): unknown => v2With({ iam: { accessKey: 'ASIAEXAMPLE', accountId: '111122223333', callerId: `AROAEXAMPLEROLEID0001:${who}@example.com`, cognitoIdentity: null, principalOrgId: null, userArn: sso(who), userId: `AROAEXAMPLEROLEID0001:${who}@example.com` } }, { apiId })
      expect(callerIn(as('alice'))).toBe(`iam:${sso('alice')}`)
      expect(callerIn(as('bob'))).not.toBe(callerIn(as('alice')))
    }
  })
})

describe('callers named by different authenticators never read as one another: each carries its kind', () => {
  const same = 'user-42'

  test('a JWT sub, a Cognito user pool sub, a Lambda authorizer\'s principalId, an IAM identity and an ALB OIDC sub that are equal name five callers', () => {
    const callers = [
      callerIn(v2With({ jwt: { claims: { sub: same }, scopes: null } })),
      callerIn(restWith({ authorizer: { claims: { sub: same } } })),
      callerIn(restWith({ authorizer: { principalId: same } })),
      callerIn(v2With({ iam: { cognitoIdentity: { identityId: same } } })),
      callerIn(albOidcEvent({ key: 'k-1', headers: { 'x-amzn-oidc-identity': same } }, undefined))
    ]
    expect(callers).toEqual([`jwt:{"sub":"${same}"}`, `cognito:{"sub":"${same}"}`, `lambda:{"principalId":"${same}"}`, `cognito-identity:${same}`, `alb-oidc:${same}`])
  })

  test('OIDC: sub is unique per issuer only, so the issuer is part of a JWT or Cognito caller', () => {
    const jwt = (iss: string): unknown => v2With({ jwt: { claims: { sub: '1001', iss }, scopes: null } })
    expect(callerIn(jwt('https://idp-a.example.com'))).toBe('jwt:{"iss":"https://idp-a.example.com","sub":"1001"}')
    expect(callerIn(jwt('https://idp-b.example.com'))).not.toBe(callerIn(jwt('https://idp-a.example.com')))
    const pool = (iss: string): unknown => restWith({ authorizer: { claims: { sub: '1001', iss } } })
    expect(callerIn(pool('https://cognito-idp.us-east-1.amazonaws.com/us-east-1_A'))).not.toBe(callerIn(pool('https://cognito-idp.us-east-1.amazonaws.com/us-east-1_B')))
  })

  test('an IAM ARN is not a Lambda authorizer\'s principalId spelled the same', () => {
    const arn = 'arn:aws:iam::111122223333:user/alice'
    expect(callerIn(restWith({ identity: { userArn: arn } }))).not.toBe(callerIn(restWith({ authorizer: { principalId: arn } })))
  })

  test('the caller option\'s value is taken as the user gives it', () => {
    const event = v2With({ jwt: { claims: { sub: same }, scopes: null } })
    expect((defaultEventKey(event, undefined, () => same) as { caller?: unknown }).caller).toBe(same)
  })
})

describe('the API and stage are part of the default key: test and prod of one function on one table never share a record', () => {
  test('REST API: stage test and stage prod are two keys, and the same stage is one', () => {
    expect(defaultEventKey(restWith({ stage: 'test' }))).not.toEqual(defaultEventKey(restWith({ stage: 'prod' })))
    expect(defaultEventKey(restWith({ stage: 'prod' }))).toEqual(defaultEventKey(restWith({ stage: 'prod' })))
    expect(defaultEventKey(restWith({ stage: 'prod' }))).toMatchObject({ apiId: '1234567890', stage: 'prod' })
  })

  test('HTTP API: two APIs with the same path are two keys', () => {
    expect(defaultEventKey(v2With(undefined, { apiId: 'aaaa111111' }))).not.toEqual(defaultEventKey(v2With(undefined, { apiId: 'bbbb222222' })))
  })

  test('ALB: no API nor stage, the key is unchanged by their absence', () => {
    expect(defaultEventKey(albOidcEvent({ key: 'k-1' }, undefined))).toEqual({ method: 'POST', path: '/orders', idempotencyKey: 'k-1' })
  })
})
