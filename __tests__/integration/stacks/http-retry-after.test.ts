import { beforeAll, afterAll, describe, expect, jest, test } from '@jest/globals'
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type middy from '@middy/core'
import * as everyEvent from '../../../src/index.js'
import type { IdempotencyOptions, IdempotencyStore } from '../../../src/index.js'
import * as eventOnly from '../../../src/event.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { blackhole } from '../../support/blackhole.js'
import { deferred } from '../../support/deferred.js'
import { endpoint, freshTable, localClient } from '../../support/dynamodb.js'
import { albEvent, httpApiEvent, httpEventShapes } from '../../support/http.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

// 2030-01-01: a clock in the future, so that DynamoDB Local's TTL (which deletes, within seconds, a
// record that expired by the machine's clock) cannot free a claim these tests hold.
const FUTURE = Date.UTC(2030, 0, 1)

/**
 * When a client should come back (RFC 9110 §10.2.3 Retry-After), on DynamoDB Local in the stacks
 * users build: a 409 says how long the other request's lease still runs, and a store that does
 * not answer the claim in time, or fails it, is a 503 problem+json with Retry-After — never a 500
 * or a 502 — with no error handler and with http-error-handler inside or outside idempotency.
 */

type Table = Awaited<ReturnType<typeof freshTable>>
type Handler = middy.MiddyfiedHandler<unknown, unknown>
type Middleware = middy.MiddlewareObj<unknown, unknown>
interface Answer { statusCode: number, headers: Record<string, string>, multiValueHeaders?: Record<string, string[]>, body: string }

const created = { statusCode: 201, body: '{"chargeId":"ch-1"}' }
const entries: Array<[string, Pick<typeof everyEvent, 'idempotency'>]> = [['middy-idempotency', everyEvent], ['middy-idempotency/event', eventOnly]]
const stacks = ['no error handler', 'http-error-handler inside idempotency', 'http-error-handler outside idempotency'] as const

let table: Table
beforeAll(async () => { table = await freshTable() }, 30_000)
afterAll(async () => { await table.drop() })
// The tests run at once (`test.concurrent`: several wait out a hung claim's deadline), so what
// they leave open is closed once they are all done.
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => { for (const cleanup of cleanups.splice(0).reverse()) await cleanup() })

/** A Lambda context whose deadline is `ms` from now on the real clock, and that deadline. */
const invocation = (ms: number) => {
  const deadline = Date.now() + ms
  return { deadline, context: lambdaContext(() => deadline - Date.now()) }
}

/** A DynamoDB client whose PutItem (the claim) `fault` replaces; every other command goes to DynamoDB Local. */
const faultyClient = (fault: (command: PutItemCommand) => Promise<unknown>): DynamoDBClient => ({
  send: async (command: unknown, options?: unknown) => command instanceof PutItemCommand ? await fault(command) : await table.client.send(command as never, options as never)
}) as unknown as DynamoDBClient

describe.each(entries)('idempotency from %s', (_entry, { idempotency }) => {
  describe.each(middyVersions)('%s', (_, middyCore, { httpErrorHandler }) => {
    const build = (where: typeof stacks[number], work: () => Promise<unknown>, options: Partial<IdempotencyOptions> & { store?: IdempotencyStore, namespace: string }) => {
      const calls = jest.fn(work)
      let handler = middyCore<unknown, unknown>() as Handler
      if (where === 'http-error-handler outside idempotency') handler = handler.use(httpErrorHandler({ logger: false }) as Middleware)
      handler = handler.use(idempotency({ store: table.store, logger: false, ...options }) as Middleware)
      if (where === 'http-error-handler inside idempotency') handler = handler.use(httpErrorHandler({ logger: false }) as Middleware)
      return { handler: handler.handler(calls), calls }
    }
    const namespace = (): string => `retry-after-${Math.random().toString(36).slice(2, 10)}`

    describe.each(stacks)('%s', (where) => {
      test.concurrent('a 409 carries Retry-After: the seconds until the running request\'s lease ends, rounded up', async () => {
        const NOW = Date.now()
        const started = deferred()
        const gate = deferred()
        const ns = namespace()
        const run = build(where, async () => { started.resolve(); await gate.promise; return created }, { namespace: ns, now: () => NOW })
        const first = run.handler(httpApiEvent({ key: 'k-1' }), lambdaContext(10_500))
        await started.promise
        const answer = await run.handler(httpApiEvent({ key: 'k-1' }), lambdaContext()) as Answer
        expect(answer).toMatchObject({ statusCode: 409, headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '11' } })
        // With clockSkewMs, another request takes the key over that much later: the wait says so.
        const skewed = build(where, async () => created, { namespace: ns, now: () => NOW + 10_000, clockSkewMs: 2000 })
        expect(await skewed.handler(httpApiEvent({ key: 'k-1' }), lambdaContext())).toMatchObject({ statusCode: 409, headers: { 'Retry-After': '3' } })
        // A lease ending within the second is still at least 1.
        const late = build(where, async () => created, { namespace: ns, now: () => NOW + 10_400 })
        expect(await late.handler(httpApiEvent({ key: 'k-1' }), lambdaContext())).toMatchObject({ statusCode: 409, headers: { 'Retry-After': '1' } })
        gate.resolve()
        expect(await first).toEqual(created)
        expect(skewed.calls).not.toHaveBeenCalled()
        expect(late.calls).not.toHaveBeenCalled()
      })

      test.concurrent('a claim the store never answers (a blackholed endpoint): 503 problem+json with Retry-After, before the deadline; the handler does not run, and the retry runs it once', async () => {
        const { hostname, port } = new URL(endpoint())
        const proxy = await blackhole({ host: hostname, port: Number(port) })
        cleanups.push(proxy.close)
        proxy.hold()
        const ns = namespace()
        const hung = new DynamoDBStore({ tableName: table.tableName, client: localClient({ endpoint: proxy.url }) })
        const run = build(where, async () => created, { namespace: ns, store: hung, timeoutMarginMs: 1000 })
        const { deadline, context } = invocation(3000)
        const answer = await run.handler(httpApiEvent({ key: 'k-2' }), context) as Answer
        expect(Date.now()).toBeLessThan(deadline)
        expect(answer).toMatchObject({ statusCode: 503, headers: { 'Content-Type': 'application/problem+json', 'Retry-After': expect.stringMatching(/^[12]$/) } })
        expect(JSON.parse(answer.body)).toEqual({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: expect.any(String) })
        expect(answer.body).not.toMatch(/claim|retry-after-|did not answer|lease/i)
        expect(run.calls).not.toHaveBeenCalled()
        const healthy = build(where, async () => created, { namespace: ns })
        expect(await healthy.handler(httpApiEvent({ key: 'k-2' }), lambdaContext())).toEqual(created)
        expect(healthy.calls).toHaveBeenCalledTimes(1)
      })
    })

    test.concurrent('a claim that landed but whose answer never came: the 503\'s Retry-After outlasts the claim left behind, so the retry then runs the work, once', async () => {
      const ns = namespace()
      const lost = new DynamoDBStore({ tableName: table.tableName, client: faultyClient(async (command) => { await table.client.send(command); return await new Promise(() => {}) }) })
      const run = build('http-error-handler inside idempotency', async () => created, { namespace: ns, store: lost, timeoutMarginMs: 1000 })
      const { context } = invocation(3000)
      const answer = await run.handler(httpApiEvent({ key: 'k-3' }), context) as Answer
      expect(answer).toMatchObject({ statusCode: 503 })
      const retryAfterMs = Number(answer.headers['Retry-After']) * 1000
      // The claim is in the table, ours, IN_PROGRESS until this invocation's deadline.
      expect((await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${ns}#`))).toEqual([expect.objectContaining({ status: 'IN_PROGRESS' })])
      // Too early, the claim left behind answers 409, itself with a Retry-After.
      const early = build('http-error-handler inside idempotency', async () => created, { namespace: ns })
      expect(await early.handler(httpApiEvent({ key: 'k-3' }), lambdaContext())).toMatchObject({ statusCode: 409, headers: { 'Retry-After': expect.stringMatching(/^[12]$/) } })
      // When the client does as it was told, the work runs, once.
      const asTold = Date.now() + retryAfterMs
      const retry = build('http-error-handler inside idempotency', async () => created, { namespace: ns, now: () => asTold })
      expect(await retry.handler(httpApiEvent({ key: 'k-3' }), lambdaContext())).toEqual(created)
      expect(await retry.handler(httpApiEvent({ key: 'k-3' }), lambdaContext())).toMatchObject({ headers: { 'Idempotent-Replayed': 'true' } })
      expect(run.calls).not.toHaveBeenCalled()
      expect(retry.calls).toHaveBeenCalledTimes(1)
    })

    test.concurrent.each(stacks)('%s: a claim the store fails outright (throttled after the SDK\'s retries) is a 503 too, with Retry-After until the lease the request would have held ends; nothing is stored, nothing runs', async (where) => {
      const ns = namespace()
      const throttled = Object.assign(new Error('Rate of requests exceeds the allowed throughput'), { name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400, attempts: 3 } })
      const store = new DynamoDBStore({ tableName: table.tableName, client: faultyClient(async () => await Promise.reject(throttled)) })
      const run = build(where, async () => created, { namespace: ns, store, now: () => FUTURE })
      expect(await run.handler(httpApiEvent({ key: 'k-4' }), lambdaContext(9_200))).toMatchObject({ statusCode: 503, headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '10' } })
      expect(run.calls).not.toHaveBeenCalled()
      expect((await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${ns}#`))).toEqual([])
    })

    test.concurrent.each(httpEventShapes)('%s: the 409\'s Retry-After is where the shape\'s client reads headers', async (_shape, eventOf) => {
      const started = deferred()
      const gate = deferred()
      const run = build('no error handler', async () => { started.resolve(); await gate.promise; return created }, { namespace: namespace(), now: () => FUTURE })
      const first = run.handler(eventOf({ key: 'k-5' }), lambdaContext(4_000))
      await started.promise
      const answer = await run.handler(eventOf({ key: 'k-5' }), lambdaContext()) as Answer
      expect(answer.headers['Retry-After']).toBe('4')
      if (eventOf === albEvent) expect(answer.multiValueHeaders?.['Retry-After']).toEqual(['4'])
      gate.resolve()
      await first
    })
  })
})
