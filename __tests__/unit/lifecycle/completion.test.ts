import { describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, perRecord } from '../../../src/index.js'
import type { CommitResult } from '../../../src/store.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

// How a record's commit of its `transact` writes settles it (src/lifecycle/completion.ts, through
// perRecord); the refusals' ends are written by settleUnit (settle.test.ts).

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

describe.each(batchMiddyVersions)('a record\'s transact writes committed with its completion, %s', (_name, middy) => {
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
