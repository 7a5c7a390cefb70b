import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyConfigError } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions, middy7, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

interface Order { id: string, amount: number, declined?: boolean }
const orderOf = (record: SQSRecord): Order => JSON.parse(record.body) as Order
const byAmount = (a: SQSRecord, b: SQSRecord): number => orderOf(a).amount - orderOf(b).amount

/** How a handler re-orders its records before `Promise.allSettled(event.Records.map(...))`. */
type Reorder = (event: SQSEvent) => void
const reorders: Array<[string, Reorder]> = [
  ['sorts event.Records in place', (event) => { event.Records.sort(byAmount) }],
  ['assigns a sorted copy to event.Records', (event) => { event.Records = [...event.Records].sort(byAmount) }],
  // Normalised copies: new objects, each carrying its record's messageId.
  ['assigns sorted copies of the records (new objects, same messageIds)', (event) => {
    event.Records = event.Records.map((r) => ({ ...r, body: JSON.stringify(orderOf(r)) })).sort(byAmount)
  }]
]

describe.each(batchMiddyVersions)('a hand-written handler that re-orders its records, %s', (_name, middy) => {
  const stackOf = (reorder: Reorder, namespace: string, charges: string[], errors: unknown[] = []) => {
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({
        store: table.store,
        namespace,
        logger: recordingLogger(),
        onOutcome: (o) => { if (o.error !== undefined) errors.push(o.error) }
      }))
      .handler(async (event: SQSEvent) => {
        reorder(event)
        return await Promise.allSettled(event.Records.map(async (record) => {
          const order = orderOf(record)
          if (order.declined === true) throw new Error(`card declined for ${order.id}`)
          charges.push(order.id)
          return { charged: order.id }
        }))
      })
    const invoke = handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>
    return async (event: SQSEvent): Promise<unknown> => await invoke(event, lambdaContext())
  }
  const stored = async (namespace: string): Promise<Array<[unknown, unknown]>> => (await table.items())
    .filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
    .map((i) => [i.status, i.responseData])

  test.each(reorders)('it %s: each result is matched to its own record; the declined one fails, ' +
    'the charged one is COMPLETED and not charged again', async (_how, reorder) => {
    const namespace = `reordered-${Math.random().toString(36).slice(2, 10)}`
    const charges: string[] = []
    const invoke = stackOf(reorder, namespace, charges)
    // Delivered charged first; sorted by amount, the declined one comes first.
    const charged = sqsRecord({ id: 'a', amount: 20 })
    const declined = sqsRecord({ id: 'b', amount: 5, declined: true })
    const first = await invoke(sqsEvent([charged, declined]))
    expect(failedIds(first)).toEqual([declined.messageId])
    expect(charges).toEqual(['a'])
    // The declined record is not stored COMPLETED (released: onFailure 'delete'); the charged one is.
    expect(await stored(namespace)).toEqual([['COMPLETED', JSON.stringify({ charged: 'a' })]])
    // SQS redelivers what was reported failed, and (at-least-once) may redeliver the other too.
    const again = await invoke(sqsEvent([redelivered(charged), redelivered(declined)]))
    expect(failedIds(again)).toEqual([declined.messageId])
    expect(charges).toEqual(['a'])
  })

  test('an array that is not a permutation of the records it was given (one record twice) completes nothing: ' +
    'unreadable, with a clear error', async () => {
    const namespace = `not-permutation-${Math.random().toString(36).slice(2, 10)}`
    const charges: string[] = []
    const errors: unknown[] = []
    const first = sqsRecord({ id: 'a', amount: 20 })
    const second = sqsRecord({ id: 'b', amount: 5 })
    const twice: Reorder = (event) => { event.Records = [event.Records[0] as SQSRecord, event.Records[0] as SQSRecord] }
    const invoke = stackOf(twice, namespace, charges, errors)
    const response = await invoke(sqsEvent([first, second]))
    // Both reported failed (the batch middleware answers the error for every record), none COMPLETED.
    expect(failedIds(response).sort()).toEqual([first.messageId, second.messageId].sort())
    expect((await stored(namespace)).map(([status]) => status)).toEqual(['FAILED', 'FAILED'])
    expect(errors[0]).toBeInstanceOf(IdempotencyConfigError)
    expect((errors[0] as Error).message).toMatch(/not the records it was given.*messageId/)
  })

  test('copies that carry no messageId cannot be matched: unreadable, nothing completed', async () => {
    const namespace = `no-identity-${Math.random().toString(36).slice(2, 10)}`
    const errors: unknown[] = []
    const records = [sqsRecord({ id: 'a', amount: 20 }), sqsRecord({ id: 'b', amount: 5 })]
    const bodiesOnly: Reorder = (event) => { event.Records = event.Records.map((r) => ({ body: r.body }) as SQSRecord) }
    const invoke = stackOf(bodiesOnly, namespace, [], errors)
    const response = await invoke(sqsEvent(records))
    expect(failedIds(response)).toHaveLength(2)
    expect((await stored(namespace)).map(([status]) => status)).toEqual(['FAILED', 'FAILED'])
    expect((errors[0] as Error).message).toMatch(/messageId/)
  })
})

describe('a hand-written handler behind a middleware that re-orders the records, @middy/core 7', () => {
  test.each(reorders)('the middleware %s: each result is matched to its own record', async (_how, reorder) => {
    const namespace = `reordered-inner-${Math.random().toString(36).slice(2, 10)}`
    const charges: string[] = []
    const handler = middy7<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger() }))
      .use({ before: (request) => { reorder(request.event) } })
      .handler(async (event: SQSEvent) => await Promise.allSettled(event.Records.map(async (record) => {
        const order = orderOf(record)
        if (order.declined === true) throw new Error(`card declined for ${order.id}`)
        charges.push(order.id)
        return { charged: order.id }
      })))
    const invoke = handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>
    const charged = sqsRecord({ id: 'a', amount: 20 })
    const declined = sqsRecord({ id: 'b', amount: 5, declined: true })
    expect(failedIds(await invoke(sqsEvent([charged, declined]), lambdaContext()))).toEqual([declined.messageId])
    expect(charges).toEqual(['a'])
    const stored = (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`))
    expect(stored.map((i) => [i.status, i.responseData])).toEqual([['COMPLETED', JSON.stringify({ charged: 'a' })]])
  })
})
