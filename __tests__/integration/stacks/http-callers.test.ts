import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals'
import * as everyEvent from '../../../src/index.js'
import * as eventOnly from '../../../src/event.js'
import { freshTable } from '../../support/dynamodb.js'
import { anonymousShapes, authenticatedShapes, identities, oidcHeaders, spoofHeaders, type ClientRequest, type EventShape, type User } from '../../support/http-events.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * Who the caller of an HTTP request is (OWASP API1, broken object-level authorization), measured
 * from outside: events as AWS documents them for each authorizer, on DynamoDB Local, through the
 * real @middy/core. Only what AWS sets after authenticating a request names its caller; a header
 * the client sends never does.
 */

type Table = Awaited<ReturnType<typeof freshTable>>
interface Response { statusCode: number, headers?: Record<string, string>, body: string }

const answerFor = (user: User): Response => ({ statusCode: 201, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chargedFor: user }) })
const replayOf = (response: Response): Response => ({ ...response, headers: { ...response.headers, 'Idempotent-Replayed': 'true' } })

// Who the caller is, with the idempotency of each entry point that takes HTTP requests.
const entries: Array<[string, Pick<typeof everyEvent, 'idempotency'>]> = [['middy-idempotency', everyEvent], ['middy-idempotency/event', eventOnly]]

describe.each(entries)('idempotency from %s', (_entry, { idempotency }) => {
  describe.each(middyVersions)('HTTP callers on DynamoDB Local, %s', (_name, middyCore) => {
    let table: Table
    beforeAll(async () => { table = await freshTable() }, 30_000)
    afterAll(async () => { await table.drop() })

    /** The middleware on the shared table under a namespace of its own; the handler answers for whoever `send` says sent the request. */
    const api = () => {
      const namespace = `callers-${Math.random().toString(36).slice(2, 10)}`
      let sender: User = 'alice'
      const calls = jest.fn(async () => answerFor(sender))
      const handler = middyCore<unknown, unknown>().use(idempotency({ store: table.store, namespace, logger: false })).handler(calls)
      return {
        calls,
        handler,
        send: async (shape: EventShape, user: User, request: ClientRequest): Promise<Response> => {
          sender = user
          return await handler(shape.event(user, request), lambdaContext()) as Response
        },
        items: async () => (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
      }
    }

    const shapeNamed = (name: string): EventShape => authenticatedShapes.find((s) => s.name === name) as EventShape

    describe('a header naming another caller (x-amzn-oidc-identity) on API Gateway and function URLs', () => {
      const iamShapes = ['REST API, IAM auth, an IAM user', 'HTTP API, IAM auth, an IAM user', 'function URL, IAM auth, an assumed role']

      test.each(iamShapes)('%s: Mallory sending Alice\'s key and body with x-amzn-oidc-identity set to Alice\'s ARN runs as herself, not replaying Alice\'s response', async (name) => {
        const shape = shapeNamed(name)
        const { calls, send, items } = api()
        const request = { key: 'k-123', body: '{"amount":5}' }
        expect(await send(shape, 'alice', request)).toEqual(answerFor('alice'))
        const spoofed = await send(shape, 'mallory', { ...request, headers: { 'x-amzn-oidc-identity': shape.caller('alice') as string } })
        expect(spoofed).toEqual(answerFor('mallory'))
        expect(calls).toHaveBeenCalledTimes(2)
        expect(await items()).toHaveLength(2)
      })

      test.each(iamShapes)('%s: Mallory claiming Alice\'s key first, spoofing Alice, does not take Alice\'s request: Alice\'s runs and gets her own response', async (name) => {
        const shape = shapeNamed(name)
        const { calls, send, items } = api()
        const request = { key: 'k-123', body: '{"amount":5}' }
        expect(await send(shape, 'mallory', { ...request, headers: { 'x-amzn-oidc-identity': shape.caller('alice') as string } })).toEqual(answerFor('mallory'))
        expect(await send(shape, 'alice', request)).toEqual(answerFor('alice'))
        expect(calls).toHaveBeenCalledTimes(2)
        expect(await items()).toHaveLength(2)
      })
    })

    describe.each(authenticatedShapes.map((s) => [s.name, s] as const))('%s', (_shape, shape) => {
      test('two callers never share a record, whatever headers one sends to pass for the other; each caller\'s retry replays their own response', async () => {
        const { calls, send, items } = api()
        const request = { key: 'k-1', body: '{"amount":5}' }
        const asAlice = shape.name.startsWith('ALB') ? {} : spoofHeaders('alice', shape)
        expect(await send(shape, 'alice', request)).toEqual(answerFor('alice'))
        expect(await send(shape, 'mallory', { ...request, headers: asAlice })).toEqual(answerFor('mallory'))
        expect(await send(shape, 'alice', request)).toEqual(replayOf(answerFor('alice')))
        expect(await send(shape, 'mallory', { ...request, headers: asAlice })).toEqual(replayOf(answerFor('mallory')))
        expect(calls).toHaveBeenCalledTimes(2)
        expect(await items()).toHaveLength(2)
      })

      test('the other order: a caller who claims a key first, passing for another, does not answer the other\'s request', async () => {
        const { calls, send, items } = api()
        const request = { key: 'k-2', body: '{"amount":5}' }
        const asAlice = shape.name.startsWith('ALB') ? {} : spoofHeaders('alice', shape)
        expect(await send(shape, 'mallory', { ...request, headers: asAlice })).toEqual(answerFor('mallory'))
        expect(await send(shape, 'alice', request)).toEqual(answerFor('alice'))
        expect(calls).toHaveBeenCalledTimes(2)
        expect(await items()).toHaveLength(2)
      })
    })

    describe.each(anonymousShapes.map((s) => [s.name, s] as const))('%s', (_shape, shape) => {
      test('no authenticated caller: the key alone names the request (whoever knows it gets its response), and a spoofed header does not make a caller', async () => {
        const { calls, send } = api()
        const request = { key: 'k-3', body: '{"amount":5}' }
        expect(await send(shape, 'alice', { ...request, headers: shape.name.startsWith('ALB') ? {} : oidcHeaders('alice') })).toEqual(answerFor('alice'))
        expect(await send(shape, 'mallory', { ...request, headers: shape.name.startsWith('ALB') ? {} : oidcHeaders('mallory') })).toEqual(replayOf(answerFor('alice')))
        expect(calls).toHaveBeenCalledTimes(1)
      })
    })

    test('one function behind the test and prod stages of an API, one table: the same caller\'s key on each stage is two records, each stage\'s retry replays its own', async () => {
      const { calls, send, items } = api()
      const shape = shapeNamed('REST API, Lambda TOKEN authorizer (principalId and context)')
      const on = (stage: string): EventShape => ({
        ...shape,
        event: (u, r) => {
          const event = shape.event(u, r) as { requestContext: Record<string, unknown> }
          event.requestContext.stage = stage
          event.requestContext.path = `/${stage}/orders`
          return event
        }
      })
      const request = { key: 'k-5', body: '{"amount":5}' }
      expect(await send(on('test'), 'alice', request)).toEqual(answerFor('alice'))
      expect(await send(on('prod'), 'alice', request)).toEqual(answerFor('alice'))
      expect(await send(on('test'), 'alice', request)).toEqual(replayOf(answerFor('alice')))
      expect(await send(on('prod'), 'alice', request)).toEqual(replayOf(answerFor('alice')))
      expect(calls).toHaveBeenCalledTimes(2)
      expect(await items()).toHaveLength(2)
    })

    test('ALB: an x-amzn-oidc-identity that names two users (one the client\'s own) is refused with 400 and nothing is stored', async () => {
      const { calls, handler, items } = api()
      const event = shapeNamed('ALB with OIDC authentication').event('mallory', { key: 'k-4' }) as { headers: Record<string, string>, multiValueHeaders?: Record<string, string[]> }
      const { headers } = event
      delete (event as { headers?: unknown }).headers
      event.multiValueHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]]))
      event.multiValueHeaders['x-amzn-oidc-identity'] = [identities.alice.sub, identities.mallory.sub]
      expect(await handler(event, lambdaContext())).toMatchObject({ statusCode: 400, headers: { 'Content-Type': 'application/problem+json' } })
      expect(calls).not.toHaveBeenCalled()
      expect(await items()).toEqual([])
    })
  })
})
