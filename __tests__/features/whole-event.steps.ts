import { expect } from '@jest/globals'
import middy from '@middy/core'
import { defineFeature, loadFeature } from 'jest-cucumber'
import { idempotency, IdempotencyInProgressError, storedKeyOf } from './support.js'
import { freshTable } from '../support/dynamodb.js'
import { lambdaContext } from '../support/sqs.js'

const feature = loadFeature('__tests__/features/whole-event.feature')

type Order = { orderId: string }

defineFeature(feature, (scenario) => {
  let table: Awaited<ReturnType<typeof freshTable>>
  let runs: number
  let failFirst: boolean
  let hold: Promise<void> | undefined
  let outcomes: Array<{ ok: true, value: unknown } | { ok: false, error: unknown }>
  const namespace = `features-${Math.random()}`
  const handler = () => middy<Order, unknown>()
    .use(idempotency({ store: table.store, namespace, key: 'orderId', logger: false }))
    .handler(async (event) => {
      runs++
      if (failFirst && runs === 1) throw new Error('payment provider unavailable')
      await hold
      return { orderId: event.orderId, charged: true }
    })
  const invoke = async (orderId: string) => {
    try {
      outcomes.push({ ok: true, value: await handler()({ orderId }, lambdaContext()) })
    } catch (error) {
      outcomes.push({ ok: false, error })
    }
  }
  const givenHandler = (given: (text: string, fn: () => Promise<void>) => void) => {
    given('an idempotent handler backed by DynamoDB', async () => {
      table = await freshTable()
      runs = 0
      failFirst = false
      hold = undefined
      outcomes = []
    })
  }
  const recordOf = async (orderId: string) => (await table.items()).find((i) => i.idempotencyKey === storedKeyOf(namespace, orderId))
  type Step = (pattern: RegExp, fn: (...args: string[]) => unknown) => void
  // Steps that several scenarios share.
  const isProcessed = (when: Step) => { when(/^the event "(.*)" is processed$/, async (id) => { await invoke(id as string) }) }
  const ranTimes = (then: Step) => { then(/^the business logic ran (\d+) times?$/, (n) => { expect(runs).toBe(Number(n)) }) }
  const isCompleted = (and: Step) => {
    and(/^the record of "(.*)" is COMPLETED with the handler's response$/, async (id) => {
      expect(await recordOf(id as string)).toMatchObject({ status: 'COMPLETED', responseData: JSON.stringify({ orderId: id, charged: true }) })
    })
  }

  scenario('A new event is processed and its record is COMPLETED', ({ given, when, then, and }) => {
    givenHandler(given)
    isProcessed(when)
    ranTimes(then)
    isCompleted(and)
  })

  scenario('A completed event is skipped when reprocessed', ({ given, and, when, then }) => {
    givenHandler(given)
    and(/^the event "(.*)" was processed$/, async (id: string) => { await invoke(id) })
    isProcessed(when)
    ranTimes(then)
    and('the invocation returned the stored response', () => {
      expect(outcomes[1]).toEqual(outcomes[0])
      expect(outcomes[1]).toEqual({ ok: true, value: { orderId: 'order-2', charged: true } })
    })
  })

  scenario('A failed event is retried and then COMPLETED', ({ given, and, when, then }) => {
    givenHandler(given)
    and('the business logic fails on its first attempt', () => { failFirst = true })
    isProcessed(when)
    then('the invocation failed with the business error', () => {
      expect(outcomes[0]).toEqual({ ok: false, error: new Error('payment provider unavailable') })
    })
    and(/^there is no record of "(.*)"$/, async (id: string) => { expect(await recordOf(id)).toBeUndefined() })
    isProcessed(when)
    ranTimes(then)
    isCompleted(and)
  })

  scenario('Two concurrent attempts on a new event run it once', ({ given, when, then, and }) => {
    givenHandler(given)
    when(/^the event "(.*)" is processed by (\d+) invocations at the same time$/, async (id: string, n: string) => {
      // The first to claim holds its claim until every other invocation has answered.
      let othersDone!: () => void
      hold = new Promise<void>((resolve) => { othersDone = resolve })
      let answered = 0
      await Promise.all(Array.from({ length: Number(n) }, async () => {
        await invoke(id)
        if (++answered === Number(n) - 1) othersDone()
      }))
    })
    ranTimes(then)
    and('one invocation succeeded and the other was told the event is in progress (409)', () => {
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1)
      const [conflict] = outcomes.filter((o) => !o.ok) as Array<{ error: IdempotencyInProgressError }>
      expect(conflict?.error).toBeInstanceOf(IdempotencyInProgressError)
      expect(conflict?.error.statusCode).toBe(409)
    })
  })
})
