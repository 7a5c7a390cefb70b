import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda'
import { idempotency, makeIdempotent, MemoryStore } from '../../../src/index.js'
import { deferred } from '../../support/deferred.js'
import { httpApiEvent } from '../../support/http.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * A whole event's log line says what happened to that request, not a batch record's fate
 * ("reported failed, to be retried"): an HTTP duplicate in progress elsewhere is answered 409, a
 * direct invoke's caller gets the error. One line serves both (the handler bundle's budget: see
 * bench/budgets.json); the message says which, the outcome carries the error.
 */

const recording = () => {
  const lines: Array<{ level: string, entry: { message: string, outcome?: string } }> = []
  const at = (level: string) => (entry: unknown) => { lines.push({ level, entry: entry as { message: string } }) }
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } }
}

describe('a whole event in progress in another invocation', () => {
  test('HTTP: the log says it was answered 409 and not run, in progress elsewhere', async () => {
    const { lines, logger } = recording()
    const started = deferred()
    const finish = deferred()
    const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyResultV2>()
      .use(idempotency({ store: new MemoryStore(), namespace: 'http-log', logger }))
      .handler(async () => {
        started.resolve()
        await finish.promise
        return { statusCode: 201, body: '{}' }
      })
    const first = handler(httpApiEvent({ key: 'pay-1' }), lambdaContext())
    await started.promise
    const second = await handler(httpApiEvent({ key: 'pay-1' }), lambdaContext()) as { statusCode: number }
    finish.resolve()
    await first
    expect(second.statusCode).toBe(409)
    const refused = lines.filter((l) => l.entry.outcome === 'in-progress')
    expect(refused).toEqual([{ level: 'info', entry: expect.objectContaining({ message: 'idempotency: in progress in another invocation: answered 409 (HTTP) or the error, not run' }) }])
  })

  test('a direct invoke (not HTTP): the log says its caller got the error, not run', async () => {
    const { lines, logger } = recording()
    const started = deferred()
    const finish = deferred()
    const handler = middy<{ orderId: string }>()
      .use(idempotency({ store: new MemoryStore(), namespace: 'event-log', logger }))
      .handler(async () => {
        started.resolve()
        await finish.promise
        return 'charged'
      })
    const first = handler({ orderId: 'o-1' }, lambdaContext())
    await started.promise
    await expect(handler({ orderId: 'o-1' }, lambdaContext())).rejects.toMatchObject({ name: 'IdempotencyInProgressError' })
    finish.resolve()
    await first
    const refused = lines.filter((l) => l.entry.outcome === 'in-progress')
    expect(refused).toEqual([{
      level: 'info',
      entry: expect.objectContaining({ message: 'idempotency: in progress in another invocation: answered 409 (HTTP) or the error, not run' })
    }])
  })

  test('makeIdempotent(fn): the same words as a direct invoke', async () => {
    const { lines, logger } = recording()
    const started = deferred()
    const finish = deferred()
    const charge = makeIdempotent(async (_order: { orderId: string }) => {
      started.resolve()
      await finish.promise
      return 'charged'
    }, { store: new MemoryStore(), namespace: 'call-log', leaseSeconds: 60, logger })
    const first = charge({ orderId: 'o-1' })
    await started.promise
    await expect(charge({ orderId: 'o-1' })).rejects.toMatchObject({ name: 'IdempotencyInProgressError' })
    finish.resolve()
    await first
    expect(lines.filter((l) => l.entry.outcome === 'in-progress').map((l) => l.entry.message))
      .toEqual(['idempotency: in progress in another invocation: answered 409 (HTTP) or the error, not run'])
  })
})

test('a whole event whose claim fails: the log says it was not run and failed, without batch wording', async () => {
  const { lines, logger } = recording()
  const refusing = new MemoryStore()
  refusing.claim = async () => { throw Object.assign(new Error('connection reset'), { name: 'TimeoutError' }) }
  const handler = middy<{ orderId: string }>()
    .use(idempotency({ store: refusing, namespace: 'event-log', logger }))
    .handler(async () => 'charged')
  await expect(handler({ orderId: 'o-2' }, lambdaContext())).rejects.toMatchObject({ name: 'IdempotencyStoreError' })
  expect(lines.map((l) => l.entry.message)).toEqual(['idempotency: store error: not run, its claim failed; the caller got the error'])
})
