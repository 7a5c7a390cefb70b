import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, IdempotencyInProgressError, perRecord } from '../../../src/index.js'
import { deferred } from '../../support/deferred.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

describe.each(batchMiddyVersions)('a claim\'s expiry, %s', (_name, middy) => {
  test('expiresAfterSeconds (1 s) shorter than the time left (60 s): a redelivery 5 s later, while the record runs, is refused as in progress', async () => {
    const namespace = `expiry-${Math.random().toString(36).slice(2, 10)}`
    // A clock in the future: DynamoDB Local's TTL deletes, within seconds, a record whose expiry has
    // passed by the machine's clock, which would free the claim this test holds.
    let nowMs = Date.UTC(2030, 0, 1)
    const started = deferred()
    const finish = deferred()
    let ran = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, expiresAfterSeconds: 1, now: () => nowMs, logger: recordingLogger() }))
      .handler(perRecord(async () => {
        // A second run (the claim was wrongly free) returns at once, so the test fails on its assertions.
        if (++ran > 1) return
        started.resolve()
        await finish.promise
      }))
    const invoke = handler as unknown as (event: unknown, context: unknown) => Promise<{ batchItemFailures: unknown[] }>
    const record = sqsRecord({ n: 1 })
    const first = invoke(sqsEvent([record]), lambdaContext(60_000))
    await started.promise
    nowMs += 5_000
    const again = await invoke(sqsEvent([redelivered(record)]), lambdaContext(55_000))
    expect(again.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }])
    expect((again as unknown as Array<PromiseRejectedResult>)[0]?.reason).toBeInstanceOf(IdempotencyInProgressError)
    expect(ran).toBe(1)
    finish.resolve()
    await first
  })
})
