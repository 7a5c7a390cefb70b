import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { MSKEvent, SQSEvent } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { deferred } from '../../support/deferred.js'
import { freshTable } from '../../support/dynamodb.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const statusesOf = async (namespace: string): Promise<unknown[]> =>
  (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => i.status)

type Invoke = (event: unknown, context: unknown) => Promise<unknown>
const fresh = (name: string): string => `${name}-${Math.random().toString(36).slice(2, 10)}`

describe.each(batchMiddyVersions)('how a batch closes, %s', (_name, middy) => {
  test('Middy\'s early timeout fires well before timeoutMarginMs (1.5 s ahead, margin 1 s): a record whose work rejects on the abort keeps its lease, under onFailure \'fail\'', async () => {
    const namespace = fresh('early')
    const runs: Array<Promise<unknown>> = []
    const inner = perRecord<SQSEvent>(async (_record, { signal }) => {
      // A request given the signal: the abort stops the wait, not the request.
      await new Promise((_resolve, reject) => { signal.addEventListener('abort', () => { reject(signal.reason) }) })
    })
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 1500 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event, context, options) => { const run = inner(event, context, options); runs.push(run); return await run })
    const records = [sqsRecord({ n: 1 })]
    const deadline = Date.now() + 2000
    const answer = await (handler as unknown as Invoke)(sqsEvent(records), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    expect(failedIds(answer)).toEqual([records[0]?.messageId])
    await Promise.all(runs)
    expect(await statusesOf(namespace)).toEqual(['IN_PROGRESS'])
  })

  test('the handler throws while a record perRecord started is still running: that record stays IN_PROGRESS, and completes when its work ends', async () => {
    const namespace = fresh('running')
    const started = deferred()
    const finish = deferred()
    const runs: Array<Promise<unknown>> = []
    const inner = perRecord<SQSEvent>(async () => {
      started.resolve()
      await finish.promise
      return 'charged'
    })
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event, context, options) => {
        runs.push(inner(event, context, options))
        await started.promise
        throw new Error('the handler gave up while its record was running')
      })
    const records = [sqsRecord({ n: 1 })]
    const answer = await (handler as unknown as Invoke)(sqsEvent(records), lambdaContext()).catch((error: unknown) => error)
    expect(failedIds(answer)).toEqual([records[0]?.messageId])
    expect(await statusesOf(namespace)).toEqual(['IN_PROGRESS'])
    finish.resolve()
    await Promise.all(runs)
    expect(await statusesOf(namespace)).toEqual(['COMPLETED'])
  })

  test('a hand-written Kafka handler reports its own { partition, offset } in batchItemFailures: that record is not stored COMPLETED, and is reported failed', async () => {
    const namespace = fresh('kafka-answer')
    const records = [kafkaRecord('payments', 0, 5, { paymentId: 'p5' }), kafkaRecord('payments', 0, 6, { paymentId: 'p6' })]
    const handler = middy<MSKEvent>()
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event: MSKEvent) => {
        const failed = Object.values(event.records).flat().filter((r) => r.offset === 6)
        // Built afresh, as a handler does: equal by value to the one Lambda expects, never the same object.
        return { batchItemFailures: failed.map((r) => ({ itemIdentifier: { partition: `${r.topic}-${r.partition}`, offset: r.offset } })) }
      })
    const answer = await (handler as unknown as Invoke)(mskEvent(records), lambdaContext()) as { batchItemFailures: unknown[] }
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: { partition: 'payments-0', offset: 6 } }])
    expect((await statusesOf(namespace)).sort()).toEqual(['COMPLETED', 'FAILED'])
  })
})
