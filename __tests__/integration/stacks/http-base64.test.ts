import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals'
import type middy from '@middy/core'
import * as everyEvent from '../../../src/index.js'
import type { IdempotencyOptions } from '../../../src/index.js'
import * as eventOnly from '../../../src/event.js'
import { hashOf } from '../../../src/keys/selector.js'
import { freshTable } from '../../support/dynamodb.js'
import { httpEventShapes, type HttpRequest } from '../../support/http.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * A body sent base64-encoded (`isBase64Encoded: true`, as API Gateway sends one when a REST API's
 * `binaryMediaTypes` match it, and as function URLs, HTTP APIs, ALB and VPC Lattice send binary
 * bodies) is decoded before a key path reads into it and before the payload is hashed: the payload
 * is the bytes the client sent, whichever way they travelled. On DynamoDB Local, in the stacks
 * users build (http-error-handler, http-json-body-parser), every HTTP event shape.
 */

type Table = Awaited<ReturnType<typeof freshTable>>
type Handler = middy.MiddyfiedHandler<unknown, unknown>
type Middleware = middy.MiddlewareObj<unknown, unknown>

const entries: Array<[string, Pick<typeof everyEvent, 'idempotency'>]> = [['middy-idempotency', everyEvent], ['middy-idempotency/event', eventOnly]]

describe.each(entries)('idempotency from %s', (_entry, { idempotency }) => {
  describe.each(middyVersions)('%s', (_, middyCore, { httpErrorHandler, httpJsonBodyParser }) => {
    let table: Table
    beforeAll(async () => { table = await freshTable() }, 30_000)
    afterAll(async () => { await table.drop() })

    const stack = (options: Partial<IdempotencyOptions> = {}, inner: Middleware[] = []) => {
      const namespace = `b64-${Math.random().toString(36).slice(2, 10)}`
      const calls = jest.fn(async () => ({ statusCode: 201, body: '{"chargeId":"ch-1"}' }))
      let handler = (middyCore<unknown, unknown>() as Handler)
        .use(idempotency({ store: table.store, namespace, logger: false, ...options }) as Middleware)
        .use(httpErrorHandler({ logger: false }) as Middleware)
      for (const m of inner) handler = handler.use(m)
      return {
        handler: handler.handler(calls),
        calls,
        items: async () => (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
      }
    }

    describe.each(httpEventShapes)('%s', (_shape, eventOf) => {
      const send = async (run: ReturnType<typeof stack>, request: HttpRequest) => await run.handler(eventOf(request), lambdaContext())

      test('a key path into a base64-encoded JSON body reads the decoded body: it runs, and its retry is replayed', async () => {
        const run = stack({ key: 'body.orderId' })
        expect(await send(run, { base64: true, body: '{"orderId":"o-1","amount":5}' })).toMatchObject({ statusCode: 201 })
        expect(await send(run, { base64: true, body: '{"orderId":"o-1","amount":5}' })).toMatchObject({ statusCode: 201, headers: { 'Idempotent-Replayed': 'true' } })
        expect(await send(run, { base64: true, body: '{"orderId":"o-2","amount":5}' })).toMatchObject({ statusCode: 201 })
        expect(run.calls).toHaveBeenCalledTimes(2)
      })

      test('a base64-encoded body that is not JSON, where a key path reads into it, is still a 400 naming what is wrong; nothing is stored', async () => {
        const run = stack({ key: 'body.orderId' })
        const answer = await send(run, { base64: true, body: 'orderId=o-1' }) as { statusCode: number, body: string }
        expect(answer.statusCode).toBe(400)
        expect(JSON.parse(answer.body).detail).toBe('The idempotency key of this request is read from a part that is not valid JSON.')
        expect(run.calls).not.toHaveBeenCalled()
        expect(await run.items()).toEqual([])
      })

      test('the default payload is the bytes the client sent: the same body base64-encoded or not is the same payload, other bytes a 422', async () => {
        const run = stack()
        expect(await send(run, { key: 'k-1', base64: true, body: '{"amount":5}' })).toMatchObject({ statusCode: 201 })
        expect((await run.items())[0]?.payloadHash).toBe(hashOf('{"amount":5}'))
        expect(await send(run, { key: 'k-1', body: '{"amount":5}' })).toMatchObject({ statusCode: 201, headers: { 'Idempotent-Replayed': 'true' } })
        expect(await send(run, { key: 'k-1', base64: true, body: '{"amount":5}' })).toMatchObject({ statusCode: 201, headers: { 'Idempotent-Replayed': 'true' } })
        expect(await send(run, { key: 'k-1', base64: true, body: '{"amount":6}' })).toMatchObject({ statusCode: 422 })
        expect(run.calls).toHaveBeenCalledTimes(1)
      })
    })

    test('a binary body that is not UTF-8 (an image) is compared as its bytes: the same bytes replay, one byte more is a 422', async () => {
      const [, eventOf] = httpEventShapes[0]!
      const run = stack()
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe])
      const upload = (bytes: Buffer): unknown => ({ ...(eventOf({ key: 'k-img' }) as object), body: bytes.toString('base64'), isBase64Encoded: true })
      expect(await run.handler(upload(png), lambdaContext())).toMatchObject({ statusCode: 201 })
      expect((await run.items())[0]?.payloadHash).toBe(hashOf(png))
      expect(await run.handler(upload(png), lambdaContext())).toMatchObject({ headers: { 'Idempotent-Replayed': 'true' } })
      expect(await run.handler(upload(Buffer.concat([png, Buffer.from([0])])), lambdaContext())).toMatchObject({ statusCode: 422 })
      expect(run.calls).toHaveBeenCalledTimes(1)
    })

    test('http-json-body-parser inside idempotency (a REST API binary media type): the key path and the payload are read from the decoded raw body, the parser then parses it', async () => {
      const [, eventOf] = httpEventShapes[0]!
      const run = stack({ key: 'body.orderId' }, [httpJsonBodyParser() as Middleware])
      expect(await run.handler(eventOf({ base64: true, body: '{"orderId":"o-9","amount":5}' }), lambdaContext())).toMatchObject({ statusCode: 201 })
      expect((await run.items())[0]?.payloadHash).toBe(hashOf('{"orderId":"o-9","amount":5}'))
      expect(await run.handler(eventOf({ base64: true, body: '{"orderId":"o-9","amount":5}' }), lambdaContext())).toMatchObject({ headers: { 'Idempotent-Replayed': 'true' } })
      expect(run.calls).toHaveBeenCalledTimes(1)
    })

    test('http-json-body-parser outside idempotency decodes and parses first: the parsed body is read, as for a text body', async () => {
      const [, eventOf] = httpEventShapes[1]!
      const namespace = `b64-${Math.random().toString(36).slice(2, 10)}`
      const calls = jest.fn(async () => ({ statusCode: 201, body: 'ok' }))
      const handler = (middyCore<unknown, unknown>() as Handler)
        .use(httpErrorHandler({ logger: false }) as Middleware)
        .use(httpJsonBodyParser() as Middleware)
        .use(idempotency({ store: table.store, namespace, logger: false, key: 'body.orderId' }) as Middleware)
        .handler(calls)
      await handler(eventOf({ base64: true, body: '{"orderId":"o-9"}' }), lambdaContext())
      expect(await handler(eventOf({ body: '{ "orderId": "o-9" }' }), lambdaContext())).toMatchObject({ headers: { 'Idempotent-Replayed': 'true' } })
      expect(calls).toHaveBeenCalledTimes(1)
    })
  })
})
