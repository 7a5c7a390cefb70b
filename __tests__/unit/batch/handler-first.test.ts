import { describe, expect, test } from '@jest/globals'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, MemoryStore, perRecord } from '../../../src/index.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

/**
 * `middy<SQSEvent>(perRecord(fn))`, the form that types the record with no annotation
 * (__tests__/types/per-record.ts), runs as `.handler(perRecord(fn))` does: each record once,
 * with its key and Middy's signal, and only the failed ones reported.
 */
describe.each(batchMiddyVersions)('perRecord given to middy() itself, %s', (_name, middy) => {
  test('runs each record once with its key and signal; a retry replays; only the failed record is reported', async () => {
    const store = new MemoryStore()
    const seen: Array<{ body: string, key: string, signal: boolean }> = []
    const handler = middy<SQSEvent>(perRecord(async (record, { key, signal }) => {
      seen.push({ body: record.body, key, signal: signal instanceof AbortSignal })
      if (record.body === 'declined') throw new Error('declined')
      return record.messageId
    }))
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'orders', logger: false }))
    const ok = sqsRecord('ok')
    const declined = sqsRecord('declined')
    expect(failedIds(await handler(sqsEvent([ok, declined]), lambdaContext()))).toEqual([declined.messageId])
    expect(seen).toEqual([
      { body: 'ok', key: expect.stringMatching(/^orders#[0-9a-f]{64}$/), signal: true },
      { body: 'declined', key: expect.stringMatching(/^orders#[0-9a-f]{64}$/), signal: true }
    ])
    expect(failedIds(await handler(sqsEvent([ok]), lambdaContext()))).toEqual([])
    expect(seen).toHaveLength(2)
  })
})
