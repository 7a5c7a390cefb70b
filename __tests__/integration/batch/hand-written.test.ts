import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyResponseError } from '../../../src/index.js'
import { deferred } from '../../support/deferred.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const statusOf = async (namespace: string): Promise<Array<[unknown, unknown]>> =>
  (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => [i.status, i.responseData])

describe.each(batchMiddyVersions)('a hand-written batch handler that answers with promises, %s', (_name, middy) => {
  test('returning event.Records.map(async ...) (no Promise.allSettled): each record settles as its own promise does, never stored before it settles', async () => {
    const namespace = `promises-${Math.random().toString(36).slice(2, 10)}`
    const gate = deferred<void>()
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger() }))
      .handler((async (event: SQSEvent) => event.Records.map(async (record: SQSRecord) => {
        await gate.promise
        if (JSON.parse(record.body).fail === true) throw new Error('card declined')
        return { charged: JSON.parse(record.body).id }
      })) as never)
    const good = sqsRecord({ id: 'a' })
    const bad = sqsRecord({ id: 'b', fail: true })
    const answer = (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent([good, bad]), lambdaContext())
    setImmediate(() => gate.resolve())
    const response = await answer
    expect(failedIds(response)).toEqual([bad.messageId])
    // The failed record was released (onFailure 'delete'), the good one stored with its real result.
    expect(await statusOf(namespace)).toEqual([['COMPLETED', JSON.stringify({ charged: 'a' })]])
  })

  // Concurrent across the Middy majors: each waits 1.5 s for its deadline less timeoutMarginMs.
  test.concurrent('a promise still pending near the deadline is not awaited past it: the finished records complete, the pending one keeps its lease', async () => {
    const namespace = `pending-${Math.random().toString(36).slice(2, 10)}`
    const never = deferred<void>()
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: false, timeoutMarginMs: 1000 }))
      .handler((async (event: SQSEvent) => event.Records.map(async (record: SQSRecord) => {
        if (JSON.parse(record.body).hang === true) await never.promise
        return 'charged'
      })) as never)
    const done = sqsRecord({ id: 'a' })
    const hanging = sqsRecord({ id: 'b', hang: true })
    const deadline = Date.now() + 2500
    const response = await (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent([done, hanging]), lambdaContext(() => deadline - Date.now()))
    expect(failedIds(response)).toEqual([hanging.messageId])
    // Answered before Lambda's deadline, with the finished record stored: a retry replays it.
    expect(Date.now()).toBeLessThan(deadline)
    expect((await statusOf(namespace)).map(([status]) => status).sort()).toEqual(['COMPLETED', 'IN_PROGRESS'])
  }, 20_000)

  test('a thenable that is not a native promise is awaited too', async () => {
    const namespace = `thenable-${Math.random().toString(36).slice(2, 10)}`
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger() }))
      .handler((async (event: SQSEvent) => event.Records.map(() => ({ then: (resolve: (v: unknown) => void) => { resolve(7) } }))) as never)
    const record = sqsRecord({ id: 'c' })
    const response = await (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent([record]), lambdaContext())
    expect(failedIds(response)).toEqual([])
    expect(await statusOf(namespace)).toEqual([['COMPLETED', '7']])
  })

  test('a result that holds a promise deeper inside is not stored as {}: the record is kept FAILED with a clear error', async () => {
    const namespace = `nested-${Math.random().toString(36).slice(2, 10)}`
    const errors: unknown[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger(), onOutcome: (o) => { errors.push(o.error) } }))
      .handler(async (event: SQSEvent) => await Promise.allSettled(event.Records.map(async () => ({ receipt: Promise.resolve(1) }))) as never)
    const record = sqsRecord({ id: 'd' })
    const response = await (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent([record]), lambdaContext())
    expect(failedIds(response)).toEqual([record.messageId])
    expect(await statusOf(namespace)).toEqual([['FAILED', undefined]])
    const [reason] = errors
    expect(reason).toBeInstanceOf(IdempotencyResponseError)
    expect((reason as Error).message).toMatch(/\$\.receipt is a Promise/)
  })
})
