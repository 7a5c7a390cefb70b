import { describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, perRecord } from '../../../src/index.js'
import type { CommitResult } from '../../../src/store.js'
import { deferred } from '../../support/deferred.js'
import { batchMiddyVersions, middy6, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

/** A MemoryStore that also commits (no tables: the writes are kept for inspection), and can be told to cancel. */
class CommittingStore extends MemoryStore {
  commits: unknown[][] = []
  cancel: CommitResult | undefined
  async commit (key: string, leaseToken: string, outcome: { expiry: number, responseData?: string }, writes: readonly unknown[]): Promise<CommitResult> {
    if (this.cancel !== undefined) return this.cancel
    this.commits.push([...writes])
    return await this.complete(key, leaseToken, outcome) ? { status: 'committed' } : { status: 'lease-lost' }
  }
}

const statuses = (store: MemoryStore): string[] => store.records().map((r) => r.status).sort()

describe.each(batchMiddyVersions)('edges found in review, %s', (_name, middy) => {
  test('perRecord wrapped without Middy\'s signal: a returning timeoutEarlyResponse neither completes nor acknowledges unfinished records, and no more start', async () => {
    const store = new MemoryStore()
    const started: string[] = []
    const finish = deferred()
    const inner = perRecord(async (record: SQSRecord) => { started.push(record.body); await finish.promise }, { concurrency: 1 })
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 100, timeoutEarlyResponse: () => ({ batchItemFailures: [] }) })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(async (event, context) => { run = inner(event, context); return await run })
    let run: Promise<unknown> | undefined
    const records = [sqsRecord('a'), sqsRecord('b'), sqsRecord('c')]
    const deadline = Date.now() + 250
    const answer = await handler(sqsEvent(records), lambdaContext(() => deadline - Date.now()))
    expect(failedIds(answer).sort()).toEqual(records.map((r) => r.messageId).sort())
    // a is running and keeps its lease; b and c never started and are released.
    expect(statuses(store)).toEqual(['IN_PROGRESS'])
    finish.resolve()
    await run
    expect(started).toEqual(['a'])
  })

  test('a TransactionConflict is temporary: the record is released to be retried, never kept FAILED, whatever onFailure says', async () => {
    const store = new CommittingStore()
    store.cancel = { status: 'refused', entry: 0, code: 'TransactionConflict', message: 'Transaction is ongoing for the item', reason: 'temporary' }
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false, onFailure: 'fail' }))
      .handler(perRecord(async (_r: SQSRecord, { transact }) => { transact({ Put: { TableName: 'Ledger', Item: { id: 1 } } }) }))
    const record = sqsRecord('x')
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(store.records()).toEqual([])
  })

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

  test('perRecord run twice on one batch is refused: records never run twice', async () => {
    const store = new MemoryStore()
    let runs = 0
    const inner = perRecord(async () => { runs++ })
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(async (event, context) => { await inner(event, context); return await inner(event, context) })
    await handler(sqsEvent([sqsRecord('x')]), lambdaContext())
    expect(runs).toBe(1)
  })

  test('transact writes holding a BigInt are sized without throwing: the record commits, nothing escapes', async () => {
    const store = new CommittingStore()
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(perRecord(async (_r: SQSRecord, { transact }) => { transact({ Put: { TableName: 'Ledger', Item: { id: 1, cents: 10n ** 20n } } }) }))
    expect(await handler(sqsEvent([sqsRecord('x')]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(store.commits).toHaveLength(1)
    expect(statuses(store)).toEqual(['COMPLETED'])
  })

  test('a result that cannot be stored keeps the record FAILED with transact as without: effects outside transact must not repeat', async () => {
    const store = new CommittingStore()
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(perRecord(async (_r: SQSRecord, { transact }) => { transact({ Put: { TableName: 'Ledger', Item: { id: 1 } } }); return { amount: 1n } }))
    expect(failedIds(await handler(sqsEvent([sqsRecord('x')]), lambdaContext()))).toHaveLength(1)
    expect(statuses(store)).toEqual(['FAILED'])
    expect(store.commits).toHaveLength(0)
  })
})

test('Middy 5/6 share one AbortController: one invocation\'s timeout does not close another invocation\'s batch', async () => {
  const store = new MemoryStore()
  const released = deferred()
  const slowFinish = deferred()
  const started: string[] = []
  const build = (timeoutEarlyInMillis: number) => middy6<SQSEvent>({ timeoutEarlyInMillis })
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, logger: false }))
    .handler(perRecord(async (record: SQSRecord) => {
      started.push(record.body)
      if (record.body === 'a1') await slowFinish.promise
      if (record.body === 'b1') await released.promise
    }, { concurrency: 1 }))
  const shortDeadline = Date.now() + 200
  const a = build(100)(sqsEvent([sqsRecord('a1'), sqsRecord('a2')]), lambdaContext(() => shortDeadline - Date.now()))
  const b = build(100)(sqsEvent([sqsRecord('b1'), sqsRecord('b2')]), lambdaContext(60_000))
  await a
  released.resolve()
  expect(await b).toEqual({ batchItemFailures: [] })
  expect(started).toContain('b2')
  slowFinish.resolve()
})
