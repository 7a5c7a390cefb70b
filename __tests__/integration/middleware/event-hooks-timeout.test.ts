import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type middy from '@middy/core'
import { idempotency, IdempotencyInProgressError, type OutcomeReport } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { middyVersions } from '../../support/middy.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * Issue 8 #1: Middy's early timeout must keep the lease whatever the stack made of it. The
 * handler is still working when Middy gives up on it; releasing the record would let an
 * immediate retry run the payment a second time.
 *
 * Middy really fires here: the Lambda context follows a real deadline 300 ms away and
 * `timeoutEarlyInMillis` is 200, so Middy answers about 100 ms in while the handler waits for
 * the test to let it finish.
 */

type Table = Awaited<ReturnType<typeof freshTable>>
type Order = { orderId: string }

class GatewayTimeout extends Error {
  readonly statusCode = 504
  constructor () {
    super('the payment took too long')
    this.name = 'GatewayTimeout'
  }
}

/** What Middy does when its early timeout fires (`timeoutEarlyResponse`): its own, or a custom one. */
const timeoutResponses: Array<[string, (() => unknown) | undefined]> = [
  ["Middy's own TimeoutError", undefined],
  ['a custom timeoutEarlyResponse that throws its own error', () => { throw new GatewayTimeout() }],
  ['a custom timeoutEarlyResponse that returns { statusCode: 504 }', () => ({ statusCode: 504 })],
  ['a custom timeoutEarlyResponse that returns { statusCode: 408 }', () => ({ statusCode: 408 })]
]

/** Where @middy/http-error-handler sits, if anywhere: its onError replaces `request.error`. */
const stacks: Array<[string, 'none' | 'inside' | 'outside']> = [
  ['without http-error-handler', 'none'],
  ['with http-error-handler inside idempotency (runs its onError first)', 'inside'],
  ['with http-error-handler outside idempotency', 'outside']
]

describe.each(middyVersions)('whole event timing out, %s', (_, middyCore, { httpErrorHandler }) => {
  let table: Table
  beforeAll(async () => { table = await freshTable() }, 30_000)
  afterAll(async () => { await table.drop() })

  /** A handler that starts, waits until the test lets it finish, and says when it has. */
  const slowWork = () => {
    let runs = 0
    let finish!: () => void
    const gate = new Promise<void>((resolve) => { finish = resolve })
    let done!: () => void
    const completed = new Promise<void>((resolve) => { done = resolve })
    const work = async (event: Order): Promise<unknown> => {
      runs++
      await gate
      done()
      return { statusCode: 201, body: JSON.stringify({ charged: event.orderId }) }
    }
    return { work, finish, completed, runs: () => runs }
  }

  const build = (where: 'none' | 'inside' | 'outside', timeoutEarlyResponse: (() => unknown) | undefined, work: (event: Order) => Promise<unknown>) => {
    const outcomes: OutcomeReport[] = []
    const failures: unknown[] = []
    const namespace = `timeout-${Math.random().toString(36).slice(2, 10)}`
    const guard = idempotency({
      store: table.store,
      namespace,
      key: 'orderId',
      logger: false,
      // At least Middy's timeoutEarlyInMillis, as the README says.
      timeoutMarginMs: 2000,
      onOutcome: (outcome) => { outcomes.push(outcome) },
      onFailure: (error) => { failures.push(error); return 'delete' }
    })
    // Middy answers 1.8 s before a 2 s deadline: 200 ms into the work, with the lease (to the
    // deadline) long enough for the retry to meet it however slow the machine is.
    let handler = middyCore<Order, unknown>({ timeoutEarlyInMillis: 1800, ...(timeoutEarlyResponse === undefined ? {} : { timeoutEarlyResponse }) }) as middy.MiddyfiedHandler<Order, unknown>
    if (where === 'outside') handler = handler.use(httpErrorHandler({ logger: false }))
    handler = handler.use(guard)
    if (where === 'inside') handler = handler.use(httpErrorHandler({ logger: false }))
    return {
      handler: handler.handler(work),
      outcomes,
      failures,
      items: async () => (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
    }
  }

  /** Settles either way: what the invocation answered, or what it threw. */
  const settle = async (invocation: Promise<unknown>): Promise<{ value?: unknown, error?: unknown }> =>
    await invocation.then((value) => ({ value }), (error: unknown) => ({ error }))

  describe.each(stacks)('%s', (_stack, where) => {
    test.each(timeoutResponses)('%s: the lease is kept, an immediate retry is told 409, the handler ran once', async (_response, timeoutEarlyResponse) => {
      const slow = slowWork()
      const run = build(where, timeoutEarlyResponse, slow.work)
      const deadline = Date.now() + 2000
      const first = await settle(run.handler({ orderId: 'o-1' }, lambdaContext(() => deadline - Date.now())))
      // Middy answered while the handler still waits at its gate.
      expect(slow.runs()).toBe(1)
      expect(first.value === undefined ? first.error : first.value).toBeDefined()
      expect((await run.items()).map((i) => i.status)).toEqual(['IN_PROGRESS'])
      expect(run.failures).toEqual([])
      expect(run.outcomes.map((o) => o.kind)).toEqual(['timed-out'])

      const retry = await settle(run.handler({ orderId: 'o-1' }, lambdaContext(30_000)))
      if (where === 'none') expect(retry.error).toBeInstanceOf(IdempotencyInProgressError)
      else expect(retry.value).toMatchObject({ statusCode: 409 })

      slow.finish()
      await slow.completed
      expect(slow.runs()).toBe(1)
      expect((await run.items()).map((i) => i.status)).toEqual(['IN_PROGRESS'])
    })

    test('a handler that throws goes through onFailure with the error it threw, not what http-error-handler made of it', async () => {
      const declined = new Error('card declined')
      const run = build(where, undefined, async () => { throw declined })
      const answer = await settle(run.handler({ orderId: 'o-2' }, lambdaContext(30_000)))
      if (where === 'none') expect(answer.error).toBe(declined)
      else expect(answer.value).toMatchObject({ statusCode: 500 })
      expect(run.failures).toEqual([declined])
      expect(run.outcomes).toEqual([{ kind: 'failed', key: expect.any(String), durationMs: expect.any(Number), onFailure: 'delete', error: declined }])
      expect(await run.items()).toEqual([])
    })
  })
})
