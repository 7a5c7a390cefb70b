import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals'
import type middy from '@middy/core'
import * as everyEvent from '../../../src/index.js'
import * as eventOnly from '../../../src/event.js'
import { hashOf, storedKey } from '../../../src/keys/selector.js'
import { deferred } from '../../support/deferred.js'
import { freshTable } from '../../support/dynamodb.js'
import { latticeV1Event, latticeV2Event, type HttpRequest } from '../../support/http.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * VPC Lattice events (target group event structures v1 and v2) are HTTP requests to the
 * middleware, in the stacks users build, on DynamoDB Local: the key is the Idempotency-Key header
 * scoped by method and path (never the whole event, whose v2 `timeEpoch` changes on every retry),
 * a POST without it is refused, and every refusal is answered in the shape Lattice takes from a
 * Lambda target: statusCode, statusDescription, headers, body, isBase64Encoded.
 * https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html
 */

type Table = Awaited<ReturnType<typeof freshTable>>
type Handler = middy.MiddyfiedHandler<unknown, unknown>
type Middleware = middy.MiddlewareObj<unknown, unknown>

const created = { statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"chargeId":"ch-1"}', isBase64Encoded: false }
const replayed = { ...created, headers: { ...created.headers, 'Idempotent-Replayed': 'true' } }

const entries: Array<[string, Pick<typeof everyEvent, 'idempotency'>]> = [['middy-idempotency', everyEvent], ['middy-idempotency/event', eventOnly]]
const shapes: Array<[string, (r: HttpRequest) => unknown]> = [['VPC Lattice v1', latticeV1Event], ['VPC Lattice v2', latticeV2Event]]
const where: Array<'inside' | 'outside'> = ['inside', 'outside']

/** What Lattice is sent for a refusal: the status line too, as its doc's response example has it. */
const problemAnswer = (status: number, title: string): Record<string, unknown> => ({
  statusCode: status,
  statusDescription: `${status} ${title}`,
  headers: { 'Content-Type': 'application/problem+json' },
  body: expect.stringContaining(`"title":"${title}"`),
  isBase64Encoded: false
})

describe.each(entries)('idempotency from %s', (_entry, { idempotency }) => {
  describe.each(middyVersions)('%s', (_, middyCore, { httpErrorHandler, httpJsonBodyParser }) => {
    let table: Table
    beforeAll(async () => { table = await freshTable() }, 30_000)
    afterAll(async () => { await table.drop() })

    const stack = (work: (event: unknown) => Promise<unknown>, errors: 'inside' | 'outside') => {
      const namespace = `lattice-${Math.random().toString(36).slice(2, 10)}`
      const calls = jest.fn(work)
      let handler = middyCore<unknown, unknown>() as Handler
      if (errors === 'outside') handler = handler.use(httpErrorHandler({ logger: false }) as Middleware)
      handler = handler.use(idempotency({ store: table.store, namespace, logger: false }) as Middleware)
      if (errors === 'inside') handler = handler.use(httpErrorHandler({ logger: false }) as Middleware)
      return {
        handler: handler.handler(calls),
        calls,
        namespace,
        items: async () => (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
      }
    }

    describe.each(shapes)('%s', (_shape, eventOf) => {
      test.each(where)('http-error-handler %s idempotency: a retry is replayed marked Idempotent-Replayed, keyed by the header, method and path; the handler ran once', async (errors) => {
        const run = stack(async () => created, errors)
        expect(await run.handler(eventOf({ key: 'k-1' }), lambdaContext())).toEqual(created)
        expect(await run.handler(eventOf({ key: 'k-1' }), lambdaContext())).toEqual(replayed)
        expect(run.calls).toHaveBeenCalledTimes(1)
        expect(await run.items()).toEqual([expect.objectContaining({
          idempotencyKey: storedKey(run.namespace, eventOf === latticeV2Event
            ? { method: 'POST', path: '/orders', service: 'arn:aws:vpc-lattice:us-east-1:123456789012:service/svc-0a40eebed65f8d69c', idempotencyKey: 'k-1' }
            : { method: 'POST', path: '/orders', idempotencyKey: 'k-1' }),
          payloadHash: hashOf('{"amount":5}'),
          status: 'COMPLETED'
        })])
      })

      test.each(where)('http-error-handler %s idempotency: 400 without the header, 409 while in progress, 422 for another body, each as Lattice takes it; nothing runs unprotected', async (errors) => {
        const started = deferred()
        const gate = deferred()
        const run = stack(async () => { started.resolve(); await gate.promise; return created }, errors)
        expect(await run.handler(eventOf({}), lambdaContext())).toEqual(problemAnswer(400, 'Bad Request'))
        expect(run.calls).not.toHaveBeenCalled()
        const first = run.handler(eventOf({ key: 'k-2' }), lambdaContext())
        await started.promise
        expect(await run.handler(eventOf({ key: 'k-2' }), lambdaContext())).toMatchObject(problemAnswer(409, 'Conflict'))
        gate.resolve()
        expect(await first).toEqual(created)
        expect(await run.handler(eventOf({ key: 'k-2', body: '{"amount":6}' }), lambdaContext())).toEqual(problemAnswer(422, 'Unprocessable Content'))
        expect(run.calls).toHaveBeenCalledTimes(1)
      })

      test('a GET without the header runs unprotected, as on API Gateway: nothing is stored', async () => {
        const run = stack(async () => ({ statusCode: 200, body: 'ok' }), 'inside')
        await run.handler(eventOf({ method: 'GET' }), lambdaContext())
        await run.handler(eventOf({ method: 'GET' }), lambdaContext())
        expect(run.calls).toHaveBeenCalledTimes(2)
        expect(await run.items()).toEqual([])
      })
    })

    test('v2: the principal Lattice authenticated scopes the key; a header cannot pass for another principal', async () => {
      const run = stack(async (event) => ({ statusCode: 201, body: JSON.stringify((event as { requestContext: { identity: { sessionName: string } } }).requestContext.identity.sessionName) }), 'inside')
      expect(await run.handler(latticeV2Event({ key: 'k-3', caller: 'alice' }), lambdaContext())).toMatchObject({ body: '"alice"' })
      const spoofing = latticeV2Event({ key: 'k-3', caller: 'mallory' }) as { headers: Record<string, string[]> }
      spoofing.headers['x-amzn-oidc-identity'] = ['arn:aws:sts::123456789012:assumed-role/orders-client/alice']
      expect(await run.handler(spoofing, lambdaContext())).toMatchObject({ body: '"mallory"' })
      expect(await run.handler(latticeV2Event({ key: 'k-3', caller: 'alice' }), lambdaContext())).toMatchObject({ body: '"alice"', headers: { 'Idempotent-Replayed': 'true' } })
      expect(run.calls).toHaveBeenCalledTimes(2)
    })

    test('http-json-body-parser inside idempotency parses a v2 body after we hashed the raw one; a retry replays', async () => {
      const namespace = `lattice-${Math.random().toString(36).slice(2, 10)}`
      const calls = jest.fn(async (event: { body: { amount: number } }) => ({ statusCode: 201, body: JSON.stringify({ charged: event.body.amount }) }))
      const handler = (middyCore<unknown, unknown>() as Handler)
        .use(idempotency({ store: table.store, namespace, logger: false }) as Middleware)
        // Lattice v2 header values are arrays; the parser reads content-type as API Gateway sends it.
        .use({ before: (request) => { (request.event as { headers: Record<string, unknown> }).headers['content-type'] = 'application/json' } } as Middleware)
        .use(httpJsonBodyParser() as Middleware)
        .handler(calls as never)
      expect(await handler(latticeV2Event({ key: 'k-4', body: '{"amount":5}' }), lambdaContext())).toEqual({ statusCode: 201, body: '{"charged":5}' })
      expect(await handler(latticeV2Event({ key: 'k-4', body: '{"amount":5}' }), lambdaContext())).toEqual({ statusCode: 201, body: '{"charged":5}', headers: { 'Idempotent-Replayed': 'true' } })
      expect(calls).toHaveBeenCalledTimes(1)
    })
  })
})
