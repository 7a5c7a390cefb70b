import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals'
import type middy from '@middy/core'
import type { APIGatewayProxyEventV2 } from 'aws-lambda'
import * as everyEvent from '../../../src/index.js'
import type { IdempotencyOptions } from '../../../src/index.js'
import * as eventOnly from '../../../src/event.js'
import { hashOf, storedKey } from '../../../src/keys/selector.js'
import { freshTable } from '../../support/dynamodb.js'
import { httpApiEvent } from '../../support/http.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * Whole-event (HTTP) mode inside the stacks users build with the real Middy packages
 * (DESIGN §7, issue 8 #12), on DynamoDB Local, Middy 7 and 6, each with the middlewares of its own release. `.use()` order is outermost
 * first: Middy runs `before` hooks in that order and `after`/`onError` hooks in reverse.
 */

type Table = Awaited<ReturnType<typeof freshTable>>
type Handler = middy.MiddyfiedHandler<APIGatewayProxyEventV2, unknown>
type Middleware = middy.MiddlewareObj<APIGatewayProxyEventV2, unknown>

const created = { statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"chargeId":"ch-1"}' }
const replayedCreated = { ...created, headers: { ...created.headers, 'Idempotent-Replayed': 'true' } }

// The HTTP stacks with the idempotency of each entry point that takes whole events.
const entries: Array<[string, Pick<typeof everyEvent, 'idempotency'>]> = [['middy-idempotency', everyEvent], ['middy-idempotency/event', eventOnly]]

describe.each(entries)('idempotency from %s', (_entry, { idempotency }) => {
  describe.each(middyVersions)('HTTP stacks, %s', (_, middyCore, { httpErrorHandler, httpJsonBodyParser, inputOutputLogger, warmup }) => {
    let table: Table
    beforeAll(async () => { table = await freshTable() }, 30_000)
    afterAll(async () => { await table.drop() })

    /** A stack: `outer` middlewares, then idempotency, then `inner` ones, then the handler. */
    const stack = (work: (event: APIGatewayProxyEventV2) => Promise<unknown>, { outer = [], inner = [], options = {} }: { outer?: Middleware[], inner?: Middleware[], options?: Partial<IdempotencyOptions> } = {}) => {
      const namespace = `stack-${Math.random().toString(36).slice(2, 10)}`
      const calls = jest.fn(work)
      let handler = middyCore<APIGatewayProxyEventV2, unknown>() as Handler
      for (const m of outer) handler = handler.use(m)
      handler = handler.use(idempotency({ store: table.store, namespace, logger: false, ...options }) as Middleware)
      for (const m of inner) handler = handler.use(m)
      return {
        handler: handler.handler(calls),
        calls,
        namespace,
        items: async () => (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
      }
    }

    const orders: Array<[string, 'inside' | 'outside']> = [
      ['http-error-handler inside idempotency (idempotency outermost)', 'inside'],
      ['http-error-handler outside idempotency', 'outside']
    ]
    describe.each(orders)('%s', (_order, where) => {
      const withErrors = (work: (event: APIGatewayProxyEventV2) => Promise<unknown>) =>
        stack(work, where === 'inside' ? { inner: [httpErrorHandler({ logger: false }) as Middleware] } : { outer: [httpErrorHandler({ logger: false }) as Middleware] })

      test('a retry is replayed marked Idempotent-Replayed; the handler ran once', async () => {
        const run = withErrors(async () => created)
        expect(await run.handler(httpApiEvent({ key: 'k-1' }), lambdaContext())).toEqual(created)
        expect(await run.handler(httpApiEvent({ key: 'k-1' }), lambdaContext())).toEqual(replayedCreated)
        expect(run.calls).toHaveBeenCalledTimes(1)
      })

      test('the idempotency refusals become 400, 409 and 422 problem details', async () => {
        let release!: () => void
        const gate = new Promise<void>((resolve) => { release = resolve })
        let started!: () => void
        const running = new Promise<void>((resolve) => { started = resolve })
        const run = withErrors(async () => { started(); await gate; return created })
        expect(await run.handler(httpApiEvent({}), lambdaContext())).toMatchObject({ statusCode: 400, headers: { 'Content-Type': 'application/problem+json' }, body: expect.stringContaining('"title":"Bad Request"') })
        const first = run.handler(httpApiEvent({ key: 'k-2' }), lambdaContext())
        await running
        expect(await run.handler(httpApiEvent({ key: 'k-2' }), lambdaContext())).toMatchObject({ statusCode: 409, headers: { 'Content-Type': 'application/problem+json' } })
        release()
        expect(await first).toEqual(created)
        expect(await run.handler(httpApiEvent({ key: 'k-2', body: '{"amount":6}' }), lambdaContext())).toMatchObject({ statusCode: 422, headers: { 'Content-Type': 'application/problem+json' } })
        expect(run.calls).toHaveBeenCalledTimes(1)
      })

      test('a handler that throws is answered 500 and released: the retry runs', async () => {
        let attempt = 0
        const run = withErrors(async () => { if (++attempt === 1) throw new Error('gateway down'); return created })
        expect(await run.handler(httpApiEvent({ key: 'k-3' }), lambdaContext())).toMatchObject({ statusCode: 500 })
        expect(await run.items()).toEqual([])
        expect(await run.handler(httpApiEvent({ key: 'k-3' }), lambdaContext())).toEqual(created)
        expect(run.calls).toHaveBeenCalledTimes(2)
      })

      test('a response that cannot be stored: the client and its retry are told, as 500 problem details, that the key does not run the request again; the handler ran once', async () => {
        // 450 KB of JSON: more than a DynamoDB item keeps. The work ran; only its replay cannot be kept.
        const large = { statusCode: 201, headers: { 'content-type': 'application/json' }, body: 'x'.repeat(450_000) }
        const run = withErrors(async () => large)
        const first = await run.handler(httpApiEvent({ key: 'k-large' }), lambdaContext()) as { statusCode: number, headers: Record<string, string>, body: string }
        expect(first).toMatchObject({ statusCode: 500, headers: { 'Content-Type': 'application/problem+json' } })
        expect(JSON.parse(first.body)).toMatchObject({ status: 500, detail: expect.stringContaining('does not run the request again') })
        const retry = await run.handler(httpApiEvent({ key: 'k-large' }), lambdaContext()) as typeof first
        expect(retry).toMatchObject({ statusCode: 500, headers: { 'Content-Type': 'application/problem+json' } })
        expect(JSON.parse(retry.body)).toMatchObject({ status: 500, detail: expect.stringContaining('does not run the request again') })
        expect(run.calls).toHaveBeenCalledTimes(1)
      })

      test('a statusCode given as a string (\'503\', as API Gateway\'s REST proxy takes it) is read as its number: the 5xx is not stored, the retry runs and its replay is marked', async () => {
        // AWS's older Node.js blueprints answered statusCode as a string; API Gateway accepts one that is an integer.
        const unavailable = { statusCode: '503', headers: { 'content-type': 'application/json' }, body: '{"error":"provider down"}' }
        const charged = { ...created, statusCode: '201' }
        let attempt = 0
        const run = withErrors(async () => ++attempt === 1 ? unavailable : charged)
        expect(await run.handler(httpApiEvent({ key: 'k-4' }), lambdaContext())).toEqual(unavailable)
        expect(await run.items()).toEqual([])
        expect(await run.handler(httpApiEvent({ key: 'k-4' }), lambdaContext())).toEqual(charged)
        expect(await run.handler(httpApiEvent({ key: 'k-4' }), lambdaContext())).toEqual({ ...charged, headers: { ...charged.headers, 'Idempotent-Replayed': 'true' } })
        expect(run.calls).toHaveBeenCalledTimes(2)
      })
    })

    describe('http-json-body-parser', () => {
      const charge = async (event: APIGatewayProxyEventV2): Promise<unknown> =>
        ({ statusCode: 201, body: JSON.stringify({ charged: (event.body as unknown as { amount: number }).amount }) })

      test('inside idempotency it parses the body after we hashed it: key and payload hash are those of the raw request, and a retry replays', async () => {
        const run = stack(charge, { inner: [httpJsonBodyParser() as Middleware] })
        const first = httpApiEvent({ key: 'k-1', body: '{"amount":5}' })
        expect(await run.handler(first, lambdaContext())).toEqual({ statusCode: 201, body: '{"charged":5}' })
        // The parser replaced the body of the event we were given: what we stored must not follow it.
        expect(first.body).toEqual({ amount: 5 })
        expect(await run.items()).toEqual([expect.objectContaining({
          idempotencyKey: storedKey(run.namespace, { method: 'POST', path: '/orders', idempotencyKey: 'k-1' }),
          payloadHash: hashOf('{"amount":5}'),
          status: 'COMPLETED'
        })])
        expect(await run.handler(httpApiEvent({ key: 'k-1', body: '{"amount":5}' }), lambdaContext()))
          .toEqual({ statusCode: 201, body: '{"charged":5}', headers: { 'Idempotent-Replayed': 'true' } })
        expect(run.calls).toHaveBeenCalledTimes(1)
      })

      test('outside idempotency we hash the parsed body: equal JSON in another spacing is the same payload, other JSON is a 422', async () => {
        const run = stack(charge, { outer: [httpJsonBodyParser() as Middleware] })
        await run.handler(httpApiEvent({ key: 'k-1', body: '{"amount":5}' }), lambdaContext())
        expect(await run.handler(httpApiEvent({ key: 'k-1', body: '{ "amount": 5 }' }), lambdaContext())).toMatchObject({ statusCode: 201 })
        expect(await run.handler(httpApiEvent({ key: 'k-1', body: '{"amount":6}' }), lambdaContext())).toMatchObject({ statusCode: 422, headers: { 'Content-Type': 'application/problem+json' } })
        expect((await run.items())[0]?.payloadHash).toBe(hashOf({ amount: 5 }))
        expect(run.calls).toHaveBeenCalledTimes(1)
      })
    })

    test('@middy/warmup before idempotency: a warmup event returns before us, nothing is claimed, no item is written', async () => {
      const run = stack(async () => created, { outer: [warmup() as Middleware] })
      const ping = { source: 'serverless-plugin-warmup' } as unknown as APIGatewayProxyEventV2
      expect(await run.handler(ping, lambdaContext())).toBe('warmup')
      expect(run.calls).not.toHaveBeenCalled()
      expect(await run.items()).toEqual([])
      expect(await run.handler(httpApiEvent({ key: 'k-1' }), lambdaContext())).toEqual(created)
      expect((await run.items()).map((i) => i.status)).toEqual(['COMPLETED'])
    })

    test('@middy/input-output-logger outside idempotency logs both requests; the replayed response, which skips every after hook, is logged through responseHook', async () => {
      const lines: unknown[] = []
      const logger = (line: unknown): void => { lines.push(line) }
      const run = stack(async () => created, {
        outer: [inputOutputLogger({ logger }) as Middleware],
        // Middy's early return (how a replay skips the handler) skips every `after` hook, the
        // logger's too: https://middy.js.org/docs/intro/early-interrupt
        options: { responseHook: (response) => { logger({ response }); return response } }
      })
      const first = httpApiEvent({ key: 'k-1' })
      const retry = httpApiEvent({ key: 'k-1' })
      await run.handler(first, lambdaContext())
      expect(await run.handler(retry, lambdaContext())).toEqual(replayedCreated)
      expect(lines).toEqual([{ event: first }, { response: created }, { event: retry }, { response: replayedCreated }])
    })
  })
})
