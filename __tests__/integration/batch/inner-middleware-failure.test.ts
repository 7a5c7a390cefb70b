import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const statusesOf = async (namespace: string): Promise<unknown[]> => await table.statusesOf(namespace)

/** A middleware like @middy/ssm whose fetch fails: it throws in `before` without looking at the records. */
const failingFetch = () => ({ before: async () => { throw new Error('SSM GetParameters: throttled') } })
/** A middleware like @middy/validator: it reads the event, finds it invalid, throws in `before`. */
const failingValidator = (invalid: (event: SQSEvent) => boolean) => ({
  before: async (request: { event: SQSEvent }) => { if (invalid(request.event)) throw new Error('event is invalid') }
})

describe.each(batchMiddyVersions)('a middleware after idempotency fails in before, %s', (_name, middy) => {
  const run = async (handler: unknown, records: SQSRecord[]): Promise<unknown> =>
    await (handler as (e: unknown, c: unknown) => Promise<unknown>)(sqsEvent(records), lambdaContext())

  test('one that never read the records (an SSM fetch): every record is released, none kept FAILED under onFailure \'fail\', and all are reported failed', async () => {
    const namespace = `ssm-${Math.random().toString(36).slice(2, 10)}`
    let ran = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .use(failingFetch())
      .handler(async (event: SQSEvent) => await Promise.allSettled(event.Records.map(async () => { ran++ })))
    const records = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]
    expect(failedIds(await run(handler, records))).toEqual(records.map((r) => r.messageId))
    expect(ran).toBe(0)
    expect(await statusesOf(namespace)).toEqual([])
  })

  test('a validator that read the records, in front of perRecord: every record is released (perRecord never started one)', async () => {
    const namespace = `validator-${Math.random().toString(36).slice(2, 10)}`
    let ran = 0
    let reject = false
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .use(failingValidator((event) => reject && event.Records.length > 0))
      .handler(perRecord(async () => { ran++ }))
    // A first batch goes through (the function is warm), then a batch the validator refuses.
    await run(handler, [sqsRecord({ n: 0 })])
    reject = true
    const records = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]
    expect(failedIds(await run(handler, records))).toEqual(records.map((r) => r.messageId))
    expect(ran).toBe(1)
    expect(await statusesOf(namespace)).toEqual(['COMPLETED'])
  })

  test('a validator that read the records fails the FIRST batch a cold instance serves, in front of perRecord: the middleware cannot yet know its handler, and keeps them per onFailure (FAILED under \'fail\'), never releasing what a hand-written handler may have run', async () => {
    const namespace = `cold-${Math.random().toString(36).slice(2, 10)}`
    let ran = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .use(failingValidator((event) => event.Records.length > 0))
      .handler(perRecord(async () => { ran++ }))
    const records = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]
    expect(failedIds(await run(handler, records))).toEqual(records.map((r) => r.messageId))
    expect(ran).toBe(0)
    expect(await statusesOf(namespace)).toEqual(['FAILED', 'FAILED'])
  })

  test('a hand-written handler built beside a perRecord without the middleware (two handlers in one module) charged a record, then threw: the charged record is kept FAILED, never released to be charged again', async () => {
    const namespace = `two-handlers-${Math.random().toString(36).slice(2, 10)}`
    const charges: string[] = []
    // Built in one synchronous stretch, as a module's top level builds them.
    middy<SQSEvent>(perRecord(async () => {}))
    const payments = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, key: 'body.paymentId', onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event: SQSEvent) => {
        for (const record of event.Records) {
          const { paymentId, declined } = JSON.parse(record.body) as { paymentId: string, declined?: boolean }
          if (declined === true) throw new Error(`card declined for ${paymentId}`)
          charges.push(paymentId)
        }
        return event.Records.map(() => ({ status: 'fulfilled', value: undefined }))
      })
    const first = sqsRecord({ paymentId: 'pay-1' })
    const second = sqsRecord({ paymentId: 'pay-2', declined: true })
    await run(payments, [first, second])
    await run(payments, [first, second])
    expect(charges).toEqual(['pay-1'])
  })

  test('perRecord given fewer records than ours handed (an inner middleware filtered them) runs each under its own ' +
    'claim: a later failure leaves the one that ran COMPLETED, never run again; the one it was not given is released', async () => {
    const namespace = `filtered-${Math.random().toString(36).slice(2, 10)}`
    const ran: unknown[] = []
    let meddle = false
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .use({
        // Keeps only the first record (the batch's length no longer matches), and fails once the handler answered.
        before: async (request: { event: SQSEvent }) => { if (meddle) request.event = { Records: request.event.Records.slice(0, 1) } },
        after: async () => { if (meddle) throw new Error('response validation failed') }
      })
      .handler(perRecord(async (record: SQSRecord) => { ran.push(JSON.parse(record.body)) }))
    // A first batch goes through, then the inner middleware meddles.
    await run(handler, [sqsRecord({ n: 0 })])
    meddle = true
    const records = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]
    await run(handler, records)
    expect(ran).toEqual([{ n: 0 }, { n: 1 }])
    // n: 2 never ran: released whatever onFailure says, so no record of it is left.
    expect((await statusesOf(namespace)).sort()).toEqual(['COMPLETED', 'COMPLETED'])
    meddle = false
    await run(handler, records)
    expect(ran).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }])
  })

  test('a hand-written handler built beside a perRecord stack (one module, two handlers) threw after reading the records: still kept FAILED, never taken for perRecord', async () => {
    const namespace = `bundle-${Math.random().toString(36).slice(2, 10)}`
    const handWritten = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event: SQSEvent) => { if (event.Records.length > 0) throw new Error('half done') })
    middy<SQSEvent>()
      .use(idempotency({ store: table.store, namespace: `${namespace}-other`, logger: recordingLogger() }))
      .handler(perRecord(async () => {}))
    const records = [sqsRecord({ n: 1 })]
    expect(failedIds(await run(handWritten, records))).toEqual([records[0]?.messageId])
    expect(await statusesOf(namespace)).toEqual(['FAILED'])
  })

  test('the handler itself threw after reading the records: they may have run, and are kept FAILED under \'fail\'', async () => {
    const namespace = `threw-${Math.random().toString(36).slice(2, 10)}`
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event: SQSEvent) => { if (event.Records.length > 0) throw new Error('half done') })
    const records = [sqsRecord({ n: 1 })]
    expect(failedIds(await run(handler, records))).toEqual([records[0]?.messageId])
    expect(await statusesOf(namespace)).toEqual(['FAILED'])
  })
})
