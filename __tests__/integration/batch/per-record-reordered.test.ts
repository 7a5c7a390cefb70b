import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { MiddlewareObj } from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyConfigError, perRecord, type OutcomeReport } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { middy7, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

interface Order { id: string, amount: number, declined?: boolean }
const orderOf = (record: SQSRecord): Order => JSON.parse(record.body) as Order
const byAmount = (a: SQSRecord, b: SQSRecord): number => orderOf(a).amount - orderOf(b).amount

/** A middleware between `idempotency` and the handler that does something to the records it is handed. */
const inner = (change: (event: SQSEvent) => void): MiddlewareObj<SQSEvent> =>
  ({ before: (request) => { change(request.event) } })

const reorders: Array<[string, (event: SQSEvent) => void]> = [
  ['sorts event.Records in place', (event) => { event.Records.sort(byAmount) }],
  ['assigns a sorted copy to event.Records', (event) => { event.Records = [...event.Records].sort(byAmount) }],
  ['maps event.Records to sorted copies with the same messageIds', (event) => {
    event.Records = event.Records.map((r) => ({ ...r })).sort(byAmount)
  }]
]

/**
 * Middy 7, `@middy/sqs-partial-batch-failure`, `idempotency`, a middleware that changes the records,
 * and `perRecord`. `settled` sees the answer `idempotency` gives, index-aligned with the delivered
 * records, before the partial batch middleware turns it into `{ batchItemFailures }`.
 */
const stackOf = (change: (event: SQSEvent) => void, namespace = `per-record-reordered-${Math.random().toString(36).slice(2, 10)}`) => {
  /** Each run of the work: the order it charged and the key it ran under. */
  const runs: Array<{ id: string, key: string }> = []
  const outcomes: OutcomeReport[] = []
  const settled: unknown[] = []
  const logger = recordingLogger()
  const handler = middy7<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use({ after: (request) => { settled.push(request.response) } })
    .use(idempotency({ store: table.store, namespace, logger, onOutcome: (o) => { outcomes.push(o) } }))
    .use(inner(change))
    .handler(perRecord<SQSEvent>(async (record, { key }) => {
      const order = orderOf(record)
      runs.push({ id: order.id, key })
      if (order.declined === true) throw new Error(`card declined for ${order.id}`)
      return { charged: order.id }
    }))
  const call = handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>
  const invoke = async (event: SQSEvent): Promise<unknown> => await call(event, lambdaContext())
  /** The key each record was claimed under, as `onOutcome` reports it by messageId. */
  const keyOf = (record: SQSRecord): string | undefined => outcomes.find((o) => o.messageId === record.messageId)?.key
  const stored = async (): Promise<Map<string, [unknown, unknown]>> => new Map((await table.items())
    .filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
    .map((i) => [i.idempotencyKey as string, [i.status, i.responseData]]))
  return { invoke, runs, outcomes, settled, keyOf, stored, namespace, logger }
}

describe('perRecord behind a middleware that re-orders the records, @middy/core 7', () => {
  test.each(reorders)('it %s: each record runs once under its own key, answers for itself, and replays its own result',
    async (_how, reorder) => {
      const stack = stackOf(reorder)
      // Delivered charged first; sorted by amount, the declined one comes first.
      const charged = sqsRecord({ id: 'a', amount: 20 })
      const declined = sqsRecord({ id: 'b', amount: 5, declined: true })
      const third = sqsRecord({ id: 'c', amount: 10 })
      expect(failedIds(await stack.invoke(sqsEvent([charged, declined, third])))).toEqual([declined.messageId])
      const ownKeys = [charged, declined, third].map(stack.keyOf)
      expect(new Set(ownKeys).size).toBe(3)
      expect(stack.runs.sort((x, y) => x.id.localeCompare(y.id)))
        .toEqual([{ id: 'a', key: ownKeys[0] }, { id: 'b', key: ownKeys[1] }, { id: 'c', key: ownKeys[2] }])
      // Each key stores its own record's result; the declined one is released (onFailure 'delete').
      expect(await stack.stored()).toEqual(new Map([
        [ownKeys[0], ['COMPLETED', JSON.stringify({ charged: 'a' })]],
        [ownKeys[2], ['COMPLETED', JSON.stringify({ charged: 'c' })]]
      ]))
      // Redelivered: the charged ones replay their own results; only the declined one runs again.
      stack.runs.length = 0
      stack.settled.length = 0
      const again = await stack.invoke(sqsEvent([redelivered(charged), redelivered(declined), redelivered(third)]))
      expect(failedIds(again)).toEqual([declined.messageId])
      expect(stack.runs).toEqual([{ id: 'b', key: ownKeys[1] }])
      const answer = stack.settled[0] as Array<PromiseSettledResult<unknown>>
      expect(answer[0]).toEqual({ status: 'fulfilled', value: { charged: 'a' } })
      expect(answer[1]?.status).toBe('rejected')
      expect(answer[2]).toEqual({ status: 'fulfilled', value: { charged: 'c' } })
    })

  test('copies that carry no messageId run nowhere: each record fails alone with a clear error, ' +
    'its claim released, and runs on redelivery', async () => {
    const records = [sqsRecord({ id: 'a', amount: 20 }), sqsRecord({ id: 'b', amount: 5 })]
    const bodiesOnly = stackOf((event) => { event.Records = event.Records.map((r) => ({ body: r.body }) as SQSRecord) })
    const response = await bodiesOnly.invoke(sqsEvent(records))
    expect(failedIds(response).sort()).toEqual(records.map((r) => r.messageId).sort())
    expect(bodiesOnly.runs).toEqual([])
    expect(await bodiesOnly.stored()).toEqual(new Map())
    const errors = bodiesOnly.outcomes.map((o) => o.error)
    expect(errors).toHaveLength(2)
    for (const error of errors) {
      expect(error).toBeInstanceOf(IdempotencyConfigError)
      expect((error as Error).message).toMatch(/middleware inside idempotency.*messageId/)
    }
    // Why each record perRecord was given ran nowhere is logged.
    const logged = bodiesOnly.logger.lines.map((l) => (l.entry as { message: string }).message)
    expect(logged).toEqual(expect.arrayContaining([
      expect.stringMatching(/perRecord did not run record 0 .* \(it has no identifier\).*messageId/),
      expect.stringMatching(/perRecord did not run record 1 .* \(it has no identifier\).*messageId/)
    ]))
    // Released, not kept FAILED: redelivered to a stack that keeps the records, each runs once.
    const fixed = stackOf(() => {}, bodiesOnly.namespace)
    expect(failedIds(await fixed.invoke(sqsEvent(records.map(redelivered))))).toEqual([])
    expect(fixed.runs.map((r) => r.id).sort()).toEqual(['a', 'b'])
  })

  test('a middleware that gives one record twice: the first runs under its own key, the second fails alone, ' +
    'the record it displaced is released and reported failed', async () => {
    const first = sqsRecord({ id: 'a', amount: 20 })
    const displaced = sqsRecord({ id: 'b', amount: 5 })
    const stack = stackOf((event) => { event.Records = [event.Records[0] as SQSRecord, { ...event.Records[0] as SQSRecord }] })
    const response = await stack.invoke(sqsEvent([first, displaced]))
    expect(failedIds(response)).toEqual([displaced.messageId])
    expect(stack.runs).toEqual([{ id: 'a', key: stack.keyOf(first) }])
    expect(await stack.stored()).toEqual(new Map([[stack.keyOf(first), ['COMPLETED', JSON.stringify({ charged: 'a' })]]]))
    const error = stack.outcomes.find((o) => o.messageId === displaced.messageId)?.error
    expect(error).toBeInstanceOf(IdempotencyConfigError)
    expect((error as Error).message).toMatch(/not given/)
  })

  test('a middleware that drops a record: the rest run under their own keys; the dropped one is released ' +
    'and reported failed, never stored', async () => {
    const kept = sqsRecord({ id: 'a', amount: 20 })
    const dropped = sqsRecord({ id: 'b', amount: 5 })
    const stack = stackOf((event) => { event.Records = event.Records.filter((r) => orderOf(r).id !== 'b') })
    const response = await stack.invoke(sqsEvent([kept, dropped]))
    expect(failedIds(response)).toEqual([dropped.messageId])
    expect(stack.runs).toEqual([{ id: 'a', key: stack.keyOf(kept) }])
    expect(await stack.stored()).toEqual(new Map([[stack.keyOf(kept), ['COMPLETED', JSON.stringify({ charged: 'a' })]]]))
    expect(stack.outcomes.find((o) => o.messageId === dropped.messageId)?.error).toBeInstanceOf(IdempotencyConfigError)
  })

  test('FIFO: a record it was not given holds back the rest of its message group, which keeps its order', async () => {
    const dropped = sqsRecord({ id: 'a', amount: 20 }, { groupId: 'g1' })
    const behind = sqsRecord({ id: 'b', amount: 5 }, { groupId: 'g1' })
    const other = sqsRecord({ id: 'c', amount: 10 }, { groupId: 'g2' })
    const stack = stackOf((event) => { event.Records = event.Records.filter((r) => orderOf(r).id !== 'a') })
    const response = await stack.invoke(sqsEvent([dropped, behind, other]))
    expect(failedIds(response)).toEqual([dropped.messageId, behind.messageId])
    expect(stack.runs).toEqual([{ id: 'c', key: stack.keyOf(other) }])
    expect(await stack.stored()).toEqual(new Map([[stack.keyOf(other), ['COMPLETED', JSON.stringify({ charged: 'c' })]]]))
  })
})
