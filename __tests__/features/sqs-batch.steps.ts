import { expect } from '@jest/globals'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { defineFeature, loadFeature } from 'jest-cucumber'
import { idempotency, storedKeyOf } from './support.js'
import { freshTable } from '../support/dynamodb.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../support/sqs.js'

const feature = loadFeature('__tests__/features/sqs-batch.feature')
const list = (text: string): string[] => text.split(',').map((s) => s.trim())

defineFeature(feature, (scenario) => {
  let table: Awaited<ReturnType<typeof freshTable>>
  let namespace: string
  let charges: Map<string, number>
  let declined: Set<string>
  let batch: SQSRecord[]
  let response: unknown
  let releaseBlocker: (() => void) | undefined

  const consumer = () => middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store: table.store, namespace, key: 'body.paymentId', logger: false }))
    .handler(async (event) => await Promise.allSettled(event.Records.map(async (record) => {
      const { paymentId } = JSON.parse(record.body) as { paymentId: string }
      if (declined.has(paymentId)) throw new Error(`card gateway declined ${paymentId}`)
      charges.set(paymentId, (charges.get(paymentId) ?? 0) + 1)
      return { paymentId, status: 'charged' }
    })))
  const idOf = (paymentId: string): string => batch.find((r) => JSON.parse(r.body).paymentId === paymentId)?.messageId ?? 'missing'
  const recordOf = async (paymentId: string) => (await table.items()).find((i) => i.idempotencyKey === storedKeyOf(namespace, paymentId))

  const background = (given: (text: string, fn: () => Promise<void>) => void) => {
    given('an SQS payment consumer backed by DynamoDB', async () => {
      table = await freshTable()
      namespace = `payments-${Math.random()}`
      charges = new Map()
      declined = new Set()
      releaseBlocker = undefined
    })
  }
  const arrive = (when: (pattern: RegExp, fn: (text: string) => Promise<void>) => void) => {
    when(/^payments "(.*)" arrive in one batch$/, async (text: string) => {
      batch = list(text).map((paymentId) => sqsRecord({ paymentId }))
      response = await consumer()(sqsEvent(batch), lambdaContext())
    })
  }
  const chargedOnce = (and: (pattern: RegExp, fn: (text: string) => void) => void) => {
    and(/^each of "(.*)" was charged exactly once$/, (text: string) => {
      for (const paymentId of list(text)) expect(charges.get(paymentId)).toBe(1)
    })
  }

  scenario('Only the record that really failed is reported', ({ given, and, when, then }) => {
    background(given)
    and(/^the card gateway declines payment "(.*)"$/, (id: string) => { declined.add(id) })
    arrive(when)
    then(/^the batch response reports only "(.*)" as failed$/, (id: string) => { expect(failedIds(response)).toEqual([idOf(id)]) })
    and(/^payments "(.*)" are COMPLETED and "(.*)" has no record$/, async (done: string, failed: string) => {
      for (const id of list(done)) expect((await recordOf(id))?.status).toBe('COMPLETED')
      expect(await recordOf(failed)).toBeUndefined()
    })
    when(/^the batch is delivered again and the gateway accepts "(.*)"$/, async (id: string) => {
      declined.delete(id)
      response = await consumer()(sqsEvent(batch.map(redelivered)), lambdaContext())
    })
    then('the batch response reports nothing as failed', () => { expect(failedIds(response)).toEqual([]) })
    chargedOnce(and)
  })

  scenario('The same payment twice in one batch is charged once', ({ given, when, then, and }) => {
    background(given)
    arrive(when)
    then('the batch response reports nothing as failed', () => { expect(failedIds(response)).toEqual([]) })
    chargedOnce(and)
  })

  scenario('A FIFO message group stops at its first record that cannot run', ({ given, and, when, then }) => {
    background(given)
    and(/^payment "(.*)" of group "(.*)" is being processed by another invocation$/, async (paymentId: string, group: string) => {
      const gate = new Promise<void>((resolve) => { releaseBlocker = resolve })
      const blocker = middy<SQSEvent>()
        .use(idempotency({ store: table.store, namespace, key: 'body.paymentId', logger: false }))
        .handler(async (event) => await Promise.allSettled(event.Records.map(async () => { await gate })))
      void blocker(sqsEvent([sqsRecord({ paymentId }, { groupId: group })]), lambdaContext())
      // Wait until its claim is visible in the table (an observable event, not a guess at timing).
      while ((await recordOf(paymentId))?.status !== 'IN_PROGRESS') await new Promise((resolve) => setImmediate(resolve))
    })
    when(/^FIFO payments "(.*)" arrive in one batch$/, async (text: string) => {
      batch = list(text).map((entry) => {
        const [paymentId, groupId] = entry.split(':') as [string, string]
        return sqsRecord({ paymentId }, { groupId })
      })
      response = await consumer()(sqsEvent(batch), lambdaContext())
      releaseBlocker?.()
    })
    then(/^the batch response reports only "(.*)" as failed$/, (text: string) => {
      expect(failedIds(response)).toEqual(list(text).map(idOf))
    })
    and(/^payments "(.*)" are COMPLETED and "(.*)" have no record$/, async (done: string, held: string) => {
      for (const id of list(done)) expect((await recordOf(id))?.status).toBe('COMPLETED')
      for (const id of list(held)) expect(await recordOf(id)).toBeUndefined()
    })
  })
})
