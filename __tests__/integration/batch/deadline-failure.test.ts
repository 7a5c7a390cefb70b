import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

describe.each(batchMiddyVersions)('perRecord: a record that fails within timeoutMarginMs of the deadline, %s', (_name, middy) => {
  test('keeps its lease (IN_PROGRESS), never goes through onFailure, while a record that failed earlier does', async () => {
    const namespace = `margin-${Math.random().toString(36).slice(2, 10)}`
    let remaining = 30_000
    const outcomes: string[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', timeoutMarginMs: 1000, logger: recordingLogger(), onOutcome: (o) => { outcomes.push(o.kind) } }))
      .handler(perRecord(async (record: { body: string }) => {
        const { late } = JSON.parse(record.body) as { late: boolean }
        // The second record's work runs into the last second before the deadline, and then fails.
        if (late) remaining = 400
        throw new Error(late ? 'socket hang up' : 'card declined')
      }, { concurrency: 1 }))
    const early = sqsRecord({ late: false })
    const late = sqsRecord({ late: true })
    const response = await (handler as unknown as (e: SQSEvent, c: unknown) => Promise<unknown>)(sqsEvent([early, late]), lambdaContext(() => remaining))
    expect(failedIds(response)).toEqual([early.messageId, late.messageId])
    const statuses = new Map((await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => [i.status, i]))
    expect([...statuses.keys()].sort()).toEqual(['FAILED', 'IN_PROGRESS'])
    expect(outcomes).toEqual(['failed', 'timed-out'])
  })
})
