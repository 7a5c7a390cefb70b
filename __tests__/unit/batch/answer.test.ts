import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { readableByLambda, readAnswer } from '../../../src/batch/answer.js'
import type { ClaimedRecord } from '../../../src/batch/record-state.js'
import {
  IdempotencyError, IdempotencyInProgressError, idempotency, MemoryStore, type OutcomeReport
} from '../../../src/index.js'
import { storedKey } from '../../../src/keys/selector.js'
import { sqs } from '../../../src/sources/sqs.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

/** A claimed record as reading the answer sees it: its record object and its identifier. */
const claimed = (record: SQSRecord): ClaimedRecord => ({ record, id: record.messageId }) as unknown as ClaimedRecord

const statuses = (store: MemoryStore): string[] => store.records().map((r) => r.status).sort()

describe('readAnswer and readableByLambda', () => {
  test('a settled array is read in the order the handler left its records', async () => {
    const [a, b] = [sqsRecord('a'), sqsRecord('b')]
    const run = [claimed(a), claimed(b)]
    // The handler sorted its records b, a in place, and answered in that order.
    const forB = { status: 'fulfilled', value: 'for b' }
    const forA = { status: 'rejected', reason: 'for a' }
    const read = await readAnswer([forB, forA], { run, left: [b, a], delivered: run, source: sqs })
    expect(read).toEqual({ form: 'array', results: [forA, forB] })
  })

  test('a promise still pending when the wait runs out is read as failed and left running; ' +
    'the answer says it was cut off', async () => {
    const [done, pending] = [sqsRecord('done'), sqsRecord('pending')]
    const run = [claimed(done), claimed(pending)]
    const never = new Promise<never>(() => {})
    const read = await readAnswer([Promise.resolve('paid'), never], { run, delivered: run, source: sqs }, 0)
    expect(read.cutOff).toBe(true)
    expect(read.results[0]).toEqual({ status: 'fulfilled', value: 'paid' })
    expect(read.results[1]).toEqual({ status: 'rejected', reason: expect.any(IdempotencyError) })
    expect((read.results[1] as PromiseRejectedResult).reason.message).toMatch(/still pending near the deadline/)
  })

  test('Lambda reads the settled array as { batchItemFailures } naming the rejected entries by their ids', () => {
    const settled: Array<PromiseSettledResult<unknown>> = [
      { status: 'fulfilled', value: 1 }, { status: 'rejected', reason: 'x' }
    ]
    const results = readableByLambda(settled, ['id-1', 'id-2'])
    expect(JSON.parse(JSON.stringify(results))).toEqual({ batchItemFailures: [{ itemIdentifier: 'id-2' }] })
    expect(results[1]).toEqual({ status: 'rejected', reason: 'x' })
  })
})

describe.each(batchMiddyVersions)('answering a hand-written handler, %s', (_name, middy) => {
  test('a hand-written handler that answers { batchItemFailures: [] } near the deadline is trusted: its records are completed, not re-run', async () => {
    const store = new MemoryStore()
    let runs = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(async (event) => { runs += event.Records.length; return { batchItemFailures: [] } })
    const records = [sqsRecord('a'), sqsRecord('b')]
    expect(await handler(sqsEvent(records), lambdaContext(900))).toEqual({ batchItemFailures: [] })
    expect(statuses(store)).toEqual(['COMPLETED', 'COMPLETED'])
    expect(runs).toBe(2)
  })
})

describe('answering a batch through the middleware, on a MemoryStore', () => {
  test('a handler answer of the wrong length is a clear error, and the records that ran are kept FAILED, never re-run', async () => {
    const store = new MemoryStore()
    let runs = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(async (event) => { runs += event.Records.length; return [{ status: 'fulfilled', value: 1 }] })
    const records = [sqsRecord('a'), sqsRecord('b')]
    expect(failedIds(await handler(sqsEvent(records), lambdaContext()))).toEqual(records.map((r) => r.messageId))
    expect(store.records().map((r) => [r.status, r.error?.name, r.error?.message])).toEqual([
      ['FAILED', 'IdempotencyConfigError', expect.stringMatching(/returned 1 results for the 2 records/)],
      ['FAILED', 'IdempotencyConfigError', expect.stringMatching(/returned 1 results for the 2 records/)]
    ])
    expect(failedIds(await handler(sqsEvent(records.map(redelivered)), lambdaContext()))).toEqual(records.map((r) => r.messageId))
    expect(runs).toBe(2)
  })

  test('a native { batchItemFailures } answer is reported exactly, with or without the batch middleware', async () => {
    const store = new MemoryStore()
    const native = async (event: SQSEvent) => ({ batchItemFailures: event.Records.filter((r) => r.body === 'bad').map((r) => ({ itemIdentifier: r.messageId })) })
    const withBatch = middy<SQSEvent>().use(sqsPartialBatchFailure({ logger: false as never })).use(idempotency({ store, logger: false })).handler(native)
    const alone = middy<SQSEvent>().use(idempotency({ store, logger: false })).handler(native)
    for (const handler of [withBatch, alone]) {
      const bad = sqsRecord('bad')
      const response = await handler(sqsEvent([sqsRecord('good'), bad]), lambdaContext())
      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
      // What Lambda receives is the JSON: only batchItemFailures.
      expect(JSON.parse(JSON.stringify(response))).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] })
    }
  })

  test('a result that merely has a status field is a result, not a settled entry', async () => {
    const store = new MemoryStore()
    const handler = middy<SQSEvent>().use(idempotency({ store, logger: false }))
      .handler(async (event) => await Promise.all(event.Records.map(async () => ({ status: 'rejected', reason: 'card declined', retryable: false }))))
    const response = await handler(sqsEvent([sqsRecord('a')]), lambdaContext())
    expect(response).toEqual([{ status: 'fulfilled', value: { status: 'rejected', reason: 'card declined', retryable: false } }])
    expect(store.records()[0]?.status).toBe('COMPLETED')
  })

  test('a handler returning nothing counts as every record done (Lambda reads it so)', async () => {
    const store = new MemoryStore()
    const handler = middy<SQSEvent>().use(idempotency({ store, logger: false })).handler(async () => undefined)
    expect(await handler(sqsEvent([sqsRecord('a'), sqsRecord('b')]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(store.records().filter((r) => r.status === 'COMPLETED')).toHaveLength(2)
  })

  test('onOutcome is told what became of every record, once', async () => {
    const store = new MemoryStore()
    const outcomes: OutcomeReport[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace: 'outcomes', key: 'body.id', logger: false, onOutcome: (o) => { outcomes.push(o) } }))
      .handler(async (e) => await Promise.allSettled(e.Records.map(async (r) => { if (r.body.includes('boom')) throw new Error('boom'); return 1 })))
    const done = sqsRecord({ id: 'done' })
    await handler(sqsEvent([done]), lambdaContext())
    const busyKey = storedKey('outcomes', 'busy')
    await store.claim({ key: busyKey, status: 'IN_PROGRESS', expiry: Date.now() / 1000 + 60, inProgressExpiry: Date.now() + 60_000, leaseToken: 'elsewhere' }, Date.now())
    outcomes.length = 0
    const records = [
      redelivered(done), sqsRecord({ id: 'new' }), sqsRecord({ id: 'new' }), sqsRecord({ noId: 1 }),
      sqsRecord({ id: 'x', boom: 1 }), sqsRecord({ id: 'done', other: 1 }), sqsRecord({ id: 'busy' })
    ]
    await handler(sqsEvent(records), lambdaContext())
    expect(outcomes.map((o) => [o.messageId, o.kind])).toEqual([
      [records[0]?.messageId, 'replayed'],
      [records[1]?.messageId, 'completed'],
      [records[2]?.messageId, 'in-batch-copy'],
      [records[3]?.messageId, 'no-key'],
      [records[4]?.messageId, 'failed'],
      [records[5]?.messageId, 'mismatch'],
      [records[6]?.messageId, 'in-progress']
    ])
    expect(outcomes[4]?.error).toEqual(new Error('boom'))
    expect(outcomes[6]).toEqual({ kind: 'in-progress', key: busyKey, id: records[6]?.messageId, messageId: records[6]?.messageId, durationMs: expect.any(Number), error: expect.any(IdempotencyInProgressError) })
  })
})
