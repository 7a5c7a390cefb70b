import { describe, expect, test } from '@jest/globals'
import type middy from '@middy/core'
import {
  IdempotencyError, IdempotencyInProgressError, IdempotencyKeyError, IdempotencyPayloadMismatchError, MemoryStore, idempotency, type IdempotencyOptions
} from '../../../src/index.js'
import { defaultEventKey } from '../../../src/http/request.js'
import { storedKey } from '../../../src/keys/selector.js'
import { deferred } from '../../support/deferred.js'
import { httpEventShapes } from '../../support/http.js'
import { batchMiddyVersions, type Middy, type MiddyMiddlewares } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * The three refusals of an HTTP request (400 without a key, 409 in progress, 422 another body)
 * reach the client as RFC 9457 problem details whatever error handling the stack has, on the real
 * Middy 7, 6 and 5 (each with the http-error-handler of its release, 6.x for Middy 5); the developer's details go to the log, once. The store does not matter here.
 */

type Middleware = middy.MiddlewareObj<unknown, unknown>
type Handler = middy.MiddyfiedHandler<unknown, unknown>
type Stack = 'no error handler' | 'http-error-handler outside idempotency' | 'http-error-handler inside idempotency'
const stacks: Stack[] = ['no error handler', 'http-error-handler outside idempotency', 'http-error-handler inside idempotency']

const created = { statusCode: 201, body: '{"id":"o-1"}' }
const NOW = Date.UTC(2026, 0, 1)

/** A stack around idempotency; `seen` gets what the outermost `onError` sees as `request.error`. */
const build = ([middyCore, { httpErrorHandler }]: [Middy, MiddyMiddlewares], where: Stack, work: () => Promise<unknown>, options: Partial<IdempotencyOptions> = {}) => {
  const lines: unknown[] = []
  const seen: unknown[] = []
  const logger = { info: (line: unknown) => { lines.push(line) }, warn: (line: unknown) => { lines.push(line) }, error: (line: unknown) => { lines.push(line) } }
  let handler = middyCore<unknown, unknown>() as Handler
  handler = handler.use({ onError: (request) => { seen.push(request.error) } } as Middleware)
  if (where === 'http-error-handler outside idempotency') handler = handler.use(httpErrorHandler({ logger: false }) as Middleware)
  handler = handler.use(idempotency({ store: new MemoryStore(), namespace: 'orders', logger, now: () => NOW, ...options }) as Middleware)
  if (where === 'http-error-handler inside idempotency') handler = handler.use(httpErrorHandler({ logger: false }) as Middleware)
  return { handler: handler.handler(work), lines, seen }
}

/** The response a refusal must be: problem details, and nothing of ours a client should not see. */
const expectProblem = (response: unknown, status: number, title: string, internals: string[]): void => {
  const r = response as { statusCode: number, headers: Record<string, string>, multiValueHeaders?: Record<string, string[]>, body: string }
  expect(r.statusCode).toBe(status)
  expect(Object.entries(r.headers).filter(([name]) => /^content-type$/i.test(name))).toEqual([['Content-Type', 'application/problem+json']])
  if (r.multiValueHeaders !== undefined) expect(r.multiValueHeaders['Content-Type']).toEqual(['application/problem+json'])
  const body = JSON.parse(r.body) as Record<string, unknown>
  expect(body).toEqual({ type: 'about:blank', title, status, detail: expect.any(String) })
  for (const internal of ['stack', 'option', 'lease', 'hash', 'orders#', new Date(NOW).toISOString().slice(0, 10), ...internals]) {
    expect(r.body.toLowerCase()).not.toContain(internal.toLowerCase())
  }
}

describe.each(batchMiddyVersions)('%s', (_version, middyCore, middlewares) => {
  const major: [Middy, MiddyMiddlewares] = [middyCore, middlewares]
  describe.each(stacks)('%s', (where) => {
    describe.each(httpEventShapes)('%s', (_shape, eventOf) => {
      test('no Idempotency-Key: 400 problem details; the log says which request and how to fix it, once', async () => {
        const run = build(major, where, async () => created)
        expectProblem(await run.handler(eventOf({ path: '/orders' }), lambdaContext()), 400, 'Bad Request', ['/orders', 'POST'])
        expect(JSON.parse((await run.handler(eventOf({}), lambdaContext()) as { body: string }).body).detail).toContain('Idempotency-Key header')
        // The outermost middleware still sees the typed error, as thrown.
        expect(run.seen[0]).toBeInstanceOf(IdempotencyKeyError)
        expect(run.seen[0]).toMatchObject({ name: 'IdempotencyKeyError', statusCode: 400 })
        expect(run.lines).toHaveLength(2)
        expect(run.lines[0]).toMatchObject({ outcome: 'no-key', error: { name: 'IdempotencyKeyError', message: expect.stringContaining('missing from POST /orders') } })
        expect(JSON.stringify(run.lines[0])).toContain('key option')
      })

      test('the same key while the first request runs: 409 problem details; the log has the key and the lease time', async () => {
        const gate = deferred<void>()
        const started = deferred<void>()
        const run = build(major, where, async () => { started.resolve(); await gate.promise; return created })
        const first = run.handler(eventOf({ key: 'k-secret-1' }), lambdaContext())
        await started.promise
        expectProblem(await run.handler(eventOf({ key: 'k-secret-1' }), lambdaContext()), 409, 'Conflict', ['k-secret-1'])
        expect(run.seen).toEqual([expect.any(IdempotencyInProgressError)])
        expect(run.seen[0]).toBeInstanceOf(IdempotencyError)
        gate.resolve()
        expect(await first).toEqual(created)
        const refusals = run.lines.filter((line) => (line as { outcome?: string }).outcome === 'in-progress')
        expect(refusals).toEqual([expect.objectContaining({ key: expect.stringContaining('orders#'), error: { name: 'IdempotencyInProgressError', message: expect.stringContaining(new Date(NOW + 30_000).toISOString()) } })])
      })

      test('the same key with another body: 422 problem details; the log has the key', async () => {
        const run = build(major, where, async () => created)
        expect(await run.handler(eventOf({ key: 'k-secret-2', body: '{"amount":5}' }), lambdaContext())).toMatchObject(created)
        expectProblem(await run.handler(eventOf({ key: 'k-secret-2', body: '{"amount":6}' }), lambdaContext()), 422, 'Unprocessable Content', ['k-secret-2', 'amount'])
        expect(run.seen).toEqual([expect.any(IdempotencyPayloadMismatchError)])
        const refusals = run.lines.filter((line) => (line as { outcome?: string }).outcome === 'mismatch')
        expect(refusals).toEqual([expect.objectContaining({ key: storedKey('orders', defaultEventKey(eventOf({ key: 'k-secret-2' }))) })])
      })
    })

    test('a key path into a body that is not JSON: 400, and the path stays in the log', async () => {
      const [, eventOf] = httpEventShapes[1]!
      const run = build(major, where, async () => created, { key: 'body.orderId' })
      expectProblem(await run.handler(eventOf({ body: 'not json' }), lambdaContext()), 400, 'Bad Request', ['orderId', 'not json'])
      expect(JSON.stringify(run.lines)).toContain('body.orderId')
    })
  })

  test('an ALB event gets the status line ALB sends', async () => {
    const [, albEventOf] = httpEventShapes[3]!
    const run = build(major, 'no error handler', async () => created)
    expect(await run.handler(albEventOf({}), lambdaContext())).toMatchObject({ statusDescription: '400 Bad Request', multiValueHeaders: { 'Content-Type': ['application/problem+json'] } })
  })

  test.each([4, 5])('a VPC Lattice event (the shape at %i) gets the status line too, and no multiValueHeaders', async (index) => {
    const [, latticeEventOf] = httpEventShapes[index]!
    const run = build(major, 'http-error-handler inside idempotency', async () => created)
    const response = await run.handler(latticeEventOf({}), lambdaContext())
    expect(response).toEqual({ statusCode: 400, statusDescription: '400 Bad Request', headers: { 'Content-Type': 'application/problem+json' }, body: expect.any(String), isBase64Encoded: false })
  })

  test('a response built inside ours with its own Retry-After gets ours instead, in headers and multiValueHeaders', async () => {
    const [, albEventOf] = httpEventShapes[3]!
    const gate = deferred<void>()
    const started = deferred<void>()
    const store = new MemoryStore()
    const theirs: Middleware = { onError: (request) => { request.response = { statusCode: 500, headers: { 'retry-after': '120' }, multiValueHeaders: { 'RETRY-AFTER': ['120'] } } } }
    const handler = (middyCore<unknown, unknown>() as Handler)
      .use(idempotency({ store, logger: false, now: () => NOW }) as Middleware).use(theirs)
      .handler(async () => { started.resolve(); await gate.promise; return created })
    const first = handler(albEventOf({ key: 'k-1' }), lambdaContext(2_500))
    await started.promise
    expect(await handler(albEventOf({ key: 'k-1' }), lambdaContext())).toMatchObject({
      statusCode: 409,
      headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '3' },
      multiValueHeaders: { 'Content-Type': ['application/problem+json'], 'Retry-After': ['3'] }
    })
    const answer = await handler(albEventOf({ key: 'k-1' }), lambdaContext()) as { headers: object, multiValueHeaders: object }
    expect(Object.keys(answer.headers).sort()).toEqual(['Content-Type', 'Retry-After'])
    expect(Object.keys(answer.multiValueHeaders).sort()).toEqual(['Content-Type', 'Retry-After'])
    gate.resolve()
    await first
  })

  test('a response built inside ours keeps its other headers (CORS); its content type and body are replaced', async () => {
    const [, eventOf] = httpEventShapes[1]!
    const cors: Middleware = { onError: (request) => { request.response = { statusCode: 500, headers: { 'Access-Control-Allow-Origin': '*', 'content-type': 'text/plain' }, body: 'x' } } }
    let handler = middyCore<unknown, unknown>() as Handler
    handler = handler.use(idempotency({ store: new MemoryStore(), logger: false }) as Middleware).use(cors)
    const response = await handler.handler(async () => created)(eventOf({}), lambdaContext())
    expect(response).toMatchObject({ statusCode: 400, headers: { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/problem+json' } })
    expect(Object.keys((response as { headers: object }).headers)).toHaveLength(2)
  })

  test('a whole event that is not HTTP is refused by throwing the typed error, as before', async () => {
    const gate = deferred<void>()
    const started = deferred<void>()
    const run = build(major, 'no error handler', async () => { started.resolve(); await gate.promise; return 'done' })
    const first = run.handler({ orderId: 'o-1' }, lambdaContext())
    await started.promise
    await expect(run.handler({ orderId: 'o-1' }, lambdaContext())).rejects.toBeInstanceOf(IdempotencyInProgressError)
    gate.resolve()
    expect(await first).toBe('done')
  })
})
