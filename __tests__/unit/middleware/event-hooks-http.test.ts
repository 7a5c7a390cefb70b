import { describe, expect, jest, test } from '@jest/globals'
import { idempotencyKeyOf, isHttpEvent } from '../../../src/http/request.js'
import { idempotency, IdempotencyKeyError, MemoryStore, type IdempotencyOptions } from '../../../src/index.js'
import { albEvent, httpApiEvent, httpEventShapes, restApiEvent, type HttpRequest } from '../../support/http.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

describe.each(middyVersions)('HTTP events in whole-event mode, %s', (_, middy) => {
  const build = (answer: () => unknown = () => ({ statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"id":1}' }), options: Partial<IdempotencyOptions> = {}) => {
    const store = new MemoryStore()
    const calls = jest.fn(async (_event: unknown) => answer())
    const handler = middy<unknown, unknown>().use(idempotency({ store, namespace: 'api', logger: false, ...options })).handler(calls)
    return { handler, calls, store }
  }

  describe.each(httpEventShapes)('%s', (_shape, event) => {
    const send = async (handler: ReturnType<typeof build>['handler'], request: HttpRequest) => await handler(event(request), lambdaContext())

    test('by default the Idempotency-Key header, in any case, identifies the request: a retry is replayed marked Idempotent-Replayed', async () => {
      const { handler, calls } = build()
      expect(await send(handler, { key: 'k-1' })).toEqual({ statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"id":1}' })
      expect(await send(handler, { key: 'k-1', headerName: 'IDEMPOTENCY-KEY' }))
        .toEqual({ statusCode: 201, headers: { 'content-type': 'application/json', 'Idempotent-Replayed': 'true' }, body: '{"id":1}' })
      expect(calls).toHaveBeenCalledTimes(1)
    })

    test('the key is scoped by method and path: the same key elsewhere is other work', async () => {
      const { handler, calls } = build()
      await send(handler, { key: 'k-1' })
      await send(handler, { key: 'k-1', path: '/refunds' })
      await send(handler, { key: 'k-1', method: 'PUT' })
      await send(handler, { key: 'k-2' })
      expect(calls).toHaveBeenCalledTimes(4)
    })

    test('the key is scoped by the query string too: the same key and body with another query is other work', async () => {
      const { handler, calls } = build()
      await send(handler, { key: 'k-1', query: { account: 'A' } })
      await send(handler, { key: 'k-1', query: { account: 'B' } })
      expect(calls).toHaveBeenCalledTimes(2)
      // The same query is the same request, whatever the order of its parameters.
      await send(handler, { key: 'k-3', query: { a: '1', b: '2' } })
      await send(handler, { key: 'k-3', query: { b: '2', a: '1' } })
      expect(calls).toHaveBeenCalledTimes(3)
    })

    test('without the header, a GET, HEAD, OPTIONS, PUT or DELETE runs unprotected: nothing is claimed, no 400', async () => {
      const { handler, calls, store } = build()
      for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'GET']) await send(handler, { method })
      expect(calls).toHaveBeenCalledTimes(6)
      expect(store.records()).toEqual([])
    })

    test('without the header (or with an empty one) the request is refused with IdempotencyKeyError (400) naming the header, answered as problem details; nothing runs or is stored', async () => {
      const { calls, store } = build()
      const refused: unknown[] = []
      const watched = middy<unknown, unknown>().use({ onError: (request) => { refused.push(request.error) } }).use(idempotency({ store, namespace: 'api', logger: false })).handler(calls)
      for (const request of [{}, { key: '' }, { key: '  ' }]) {
        expect(await watched(event(request), lambdaContext())).toMatchObject({ statusCode: 400, headers: { 'Content-Type': 'application/problem+json' } })
      }
      expect(refused).toHaveLength(3)
      for (const error of refused) {
        expect(error).toBeInstanceOf(IdempotencyKeyError)
        expect(error).toMatchObject({ statusCode: 400, message: 'event: the Idempotency-Key header is missing from POST /orders: an HTTP request is identified by it (or set the key option)' })
      }
      expect(calls).not.toHaveBeenCalled()
      expect(store.records()).toEqual([])
    })

    test('the default payload is the body: the same key with another body is a 422', async () => {
      const { handler } = build()
      await send(handler, { key: 'k-1', body: '{"amount":5}' })
      expect(await send(handler, { key: 'k-1', body: '{"amount":6}' })).toMatchObject({ statusCode: 422, headers: { 'Content-Type': 'application/problem+json' } })
    })

    test('responseHook changes every replayed response, told the stored key and the event; a first run is not hooked', async () => {
      const seen: Array<{ key: string, event: unknown }> = []
      const { handler } = build(undefined, {
        responseHook: async (response, info) => {
          seen.push(info)
          return { ...(response as object), statusCode: 200 }
        }
      })
      const first = event({ key: 'k-1' })
      const retry = event({ key: 'k-1' })
      expect(await handler(first, lambdaContext())).toMatchObject({ statusCode: 201 })
      expect(seen).toEqual([])
      expect(await handler(retry, lambdaContext())).toEqual({ statusCode: 200, headers: { 'content-type': 'application/json', 'Idempotent-Replayed': 'true' }, body: '{"id":1}' })
      expect(seen).toEqual([{ key: expect.stringMatching(/^api#[0-9a-f]{64}$/), event: retry }])
    })
  })

  // ALB and Lattice v1 events carry no authenticated caller of their own.
  test.each(httpEventShapes.filter(([shape]) => !shape.startsWith('ALB') && shape !== 'VPC Lattice (v1)'))('%s: the key is scoped by the authenticated caller: two callers\' same key is two pieces of work', async (_shape, event) => {
    const { handler, calls } = build()
    await handler(event({ key: 'k-1', caller: 'alice' }), lambdaContext())
    await handler(event({ key: 'k-1', caller: 'bob' }), lambdaContext())
    await handler(event({ key: 'k-1', caller: 'alice' }), lambdaContext())
    expect(calls).toHaveBeenCalledTimes(2)
  })

  test('an IAM caller is its role session: two people signed in to one role (IAM Identity Center, SAML) are two callers', async () => {
    const { handler, calls } = build()
    const from = (session: string) => ({ ...restApiEvent({ key: 'pay-1' }), requestContext: { requestId: session, identity: { userArn: `arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Payments_0123456789abcdef/${session}` } } })
    await handler(from('alice@example.com'), lambdaContext())
    await handler(from('bob@example.com'), lambdaContext())
    expect(calls).toHaveBeenCalledTimes(2)
  })

  test('a worker fleet whose sessions change with the worker strips the session with the caller option: a retry from another worker is replayed', async () => {
    const caller = (event: { requestContext: { identity: { userArn: string } } }): string => event.requestContext.identity.userArn.replace(/^(arn:[^:]+:sts::\d+:assumed-role\/[^/]+)\/.*$/, '$1')
    const { handler, calls } = build(undefined, { caller })
    const from = (session: string) => ({ ...restApiEvent({ key: 'pay-1' }), requestContext: { requestId: session, identity: { userArn: `arn:aws:sts::123456789012:assumed-role/PaymentsCaller/${session}` } } })
    await handler(from('i-0aaa'), lambdaContext())
    await handler(from('i-0bbb'), lambdaContext())
    expect(calls).toHaveBeenCalledTimes(1)
  })

  test('Cognito identity-pool users share a role ARN but not an identity: their same key is two pieces of work', async () => {
    const { handler, calls } = build()
    const as = (identity: string) => ({ ...restApiEvent({ key: 'k-1' }), requestContext: { requestId: identity, identity: { cognitoIdentityId: identity, userArn: 'arn:aws:sts::123456789012:assumed-role/Cognito_PoolAuth_Role/CognitoIdentityCredentials' } } })
    await handler(as('us-east-1:user-1'), lambdaContext())
    await handler(as('us-east-1:user-2'), lambdaContext())
    expect(calls).toHaveBeenCalledTimes(2)
  })

  test('a key function that throws is the server\'s bug: a 500 whose message is not exposed, not a 400', async () => {
    const { handler } = build(undefined, { key: () => { throw new Error('secret internals') } })
    const error = await handler(httpApiEvent({ key: 'k-1' }), lambdaContext()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IdempotencyKeyError)
    expect(error).toMatchObject({ statusCode: 500, expose: false })
  })

  test('a replayed response with multiValueHeaders carries the header there too', async () => {
    const { handler } = build(() => ({ statusCode: 201, multiValueHeaders: { 'set-cookie': ['a=1', 'b=2'] }, body: 'ok' }))
    await handler(albEvent({ key: 'k-1' }), lambdaContext())
    expect(await handler(albEvent({ key: 'k-1' }), lambdaContext())).toEqual({
      statusCode: 201,
      headers: { 'Idempotent-Replayed': 'true' },
      multiValueHeaders: { 'set-cookie': ['a=1', 'b=2'], 'Idempotent-Replayed': ['true'] },
      body: 'ok'
    })
  })

  test('an event that is not HTTP keeps its defaults (the whole event) and its replay is not marked, but responseHook applies', async () => {
    const { handler, calls } = build(() => ({ statusCode: 201 }), { responseHook: (response) => ({ hooked: response }) })
    await handler({ detail: { orderId: 'o-1' } }, lambdaContext())
    expect(await handler({ detail: { orderId: 'o-1' } }, lambdaContext())).toEqual({ hooked: { statusCode: 201 } })
    await handler({ detail: { orderId: 'o-2' } }, lambdaContext())
    expect(calls).toHaveBeenCalledTimes(2)
  })

  test('an explicit key option still wins over the header', async () => {
    const { handler, calls } = build(undefined, { key: 'body' })
    await handler(httpApiEvent({ key: 'k-1', body: '{"order":1}' }), lambdaContext())
    await handler(httpApiEvent({ key: 'k-2', body: '{"order":1}' }), lambdaContext())
    expect(calls).toHaveBeenCalledTimes(1)
  })
})

describe('HTTP recognition and the header', () => {
  test('API Gateway v1, v2, function URLs and ALB are HTTP events; SQS, EventBridge and a bare requestContext are not', () => {
    expect(isHttpEvent(restApiEvent({}))).toBe(true)
    expect(isHttpEvent(httpApiEvent({}))).toBe(true)
    expect(isHttpEvent(albEvent({}))).toBe(true)
    expect(isHttpEvent({ Records: [] })).toBe(false)
    expect(isHttpEvent({ 'detail-type': 'x', detail: {} })).toBe(false)
    expect(isHttpEvent({ requestContext: {}, headers: {} })).toBe(false)
    expect(isHttpEvent({ httpMethod: 'POST', path: '/x' })).toBe(false)
  })

  test('the header value: trimmed, a structured-field quoted string unquoted, the last of several multi-values as API Gateway does', () => {
    expect(idempotencyKeyOf({ headers: { 'Idempotency-Key': ' k-1 ' } })).toBe('k-1')
    expect(idempotencyKeyOf({ headers: { 'idempotency-key': '"8e03978e"' } })).toBe('8e03978e')
    expect(idempotencyKeyOf({ multiValueHeaders: { 'idempotency-key': ['first', 'last'] } })).toBe('last')
    expect(idempotencyKeyOf({ headers: { 'idempotency-key': 'h' }, multiValueHeaders: { 'idempotency-key': ['m'] } })).toBe('h')
    expect(idempotencyKeyOf({ headers: null, multiValueHeaders: null })).toBeUndefined()
    expect(idempotencyKeyOf({ headers: { 'idempotency-key': '""' } })).toBeUndefined()
  })
})
