import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { KinesisStreamEvent, KinesisStreamRecord, MSKEvent, MSKRecord, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyHeldBackError, perRecord, type OutcomeReport } from '../../../src/index.js'
import { deferred, within } from '../../support/deferred.js'
import { freshTable, freshNamespace } from '../../support/dynamodb.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

// One key in two ordering groups of one batch: the copy waits inside the invocation for its
// original (the first record of the key in the batch), and its group waits behind it.

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

/** The records of the warm-up batches, left out of what a test reads of its namespace. */
const warmKeys = new Set<unknown>()
const itemsOf = async (namespace: string): Promise<Array<Record<string, unknown>>> =>
  (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`) && !warmKeys.has(i.idempotencyKey))
/**
 * A copy waits for its original only where the middleware knows its handler is perRecord, which it
 * learns from the first batch perRecord runs for it (a cold instance holds the copy's group back
 * instead: see the cold-instance test below). So each handler here serves one batch first.
 */
const warm = async (invoke: Invoke, event: unknown, namespace: string, runs: string[]): Promise<void> => {
  await invoke(event, lambdaContext())
  for (const item of await itemsOf(namespace)) warmKeys.add(item.idempotencyKey)
  runs.length = 0
}
const fresh = freshNamespace
type Invoke = (event: unknown, context: unknown) => Promise<unknown>
const paymentOf = (record: MSKRecord): string => (JSON.parse(Buffer.from(record.value, 'base64').toString()) as { paymentId: string }).paymentId
const bodyOf = (record: SQSRecord): { paymentId: string, fail?: boolean } => JSON.parse(record.body) as { paymentId: string, fail?: boolean }

describe.each(batchMiddyVersions)('a copy in another ordering group than its original, %s', (_name, middy) => {
  test('Kafka, one payment in two partitions: it runs once, neither copy is reported failed, and the copy\'s later partition-mate runs only once the payment is settled', async () => {
    const namespace = fresh('kafka-copy')
    const runs: string[] = []
    const releasePayment = deferred()
    const seenByLater: unknown[] = []
    let paymentKey: string | undefined
    const handler = middy<MSKEvent>()
      .use(idempotency({ store: table.store, namespace, key: 'value.paymentId', logger: recordingLogger() }))
      .handler(perRecord(async (record: MSKRecord, { key }) => {
        const payment = paymentOf(record)
        runs.push(payment)
        if (payment === 'P') paymentKey = key
        if (payment === 'P') await releasePayment.promise
        // R, in a third partition, runs beside P, then lets P finish.
        if (payment === 'R') releasePayment.resolve()
        // What Q sees of P when it starts: P's record as stored.
        if (payment === 'Q') seenByLater.push((await itemsOf(namespace)).find((i) => i.idempotencyKey === paymentKey)?.status)
      }))
    const records = [
      kafkaRecord('payments', 0, 10, { paymentId: 'P' }),
      kafkaRecord('payments', 1, 20, { paymentId: 'P' }), kafkaRecord('payments', 1, 21, { paymentId: 'Q' }),
      kafkaRecord('payments', 2, 30, { paymentId: 'R' })
    ]
    await warm(handler as unknown as Invoke, mskEvent([kafkaRecord('payments', 9, 1, { paymentId: 'warm' })]), namespace, runs)
    const answer = (handler as unknown as Invoke)(mskEvent(records), lambdaContext())
    const response = JSON.parse(JSON.stringify(await answer)) as { batchItemFailures: unknown[] }
    expect(response.batchItemFailures).toEqual([])
    expect(runs.filter((p) => p === 'P')).toHaveLength(1)
    expect(runs.sort()).toEqual(['P', 'Q', 'R'])
    const statuses = new Map((await itemsOf(namespace)).map((i) => [i.idempotencyKey, i.status]))
    expect([...statuses.values()]).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED'])
    // When Q started, P was settled.
    expect(seenByLater).toEqual(['COMPLETED'])
  })

  test('Kinesis, one payment under two partition keys: it runs once, nothing is reported failed, the copy\'s later record runs after it', async () => {
    const namespace = fresh('kinesis-copy')
    const runs: string[] = []
    const paymentIn = (record: KinesisStreamRecord): string => (JSON.parse(Buffer.from(record.kinesis.data, 'base64').toString()) as { paymentId: string }).paymentId
    const handler = middy<KinesisStreamEvent>()
      .use(idempotency({ store: table.store, namespace, key: (record: KinesisStreamRecord) => paymentIn(record), logger: recordingLogger() }))
      .handler(perRecord(async (record: KinesisStreamRecord) => { runs.push(`${paymentIn(record)}@${record.kinesis.partitionKey}`) }))
    const records = [kinesisRecord({ paymentId: 'P' }, 'account-1'), kinesisRecord({ paymentId: 'P' }, 'account-2'), kinesisRecord({ paymentId: 'Q' }, 'account-2')]
    await warm(handler as unknown as Invoke, kinesisEvent([kinesisRecord({ paymentId: 'warm' }, 'account-9')]), namespace, runs)
    const response = await (handler as unknown as Invoke)(kinesisEvent(records), lambdaContext()) as { batchItemFailures: unknown[] }
    expect(response.batchItemFailures).toEqual([])
    expect(runs).toEqual(['P@account-1', 'Q@account-2'])
    expect((await itemsOf(namespace)).map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED'])
  })

  interface FifoOptions {
    concurrency?: number
    onFailure?: 'fail' | 'delete'
    handWritten?: boolean
    outcomes?: OutcomeReport[]
    /** Awaited as a payment's work starts. */
    starting?: (paymentId: string) => Promise<void> | void
  }
  const fifo = (runs: string[], options: FifoOptions = {}) => {
    const namespace = fresh('fifo-copy')
    const work = async (record: SQSRecord): Promise<string> => {
      const body = bodyOf(record)
      await options.starting?.(body.paymentId)
      runs.push(`${body.paymentId}@${record.attributes.MessageGroupId ?? ''}`)
      if (body.fail === true) throw new Error(`declined ${body.paymentId}`)
      return body.paymentId
    }
    const stack = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, key: 'body.paymentId', onFailure: options.onFailure ?? 'delete', logger: recordingLogger(), onOutcome: (o) => { options.outcomes?.push(o) } }))
    const handler = options.handWritten === true
      ? stack.handler(async (event: SQSEvent) => await Promise.allSettled(event.Records.map(work)))
      : stack.handler(perRecord(work, options.concurrency === undefined ? {} : { concurrency: options.concurrency }))
    const invoke = handler as unknown as Invoke
    return { namespace, invoke, warm: async () => { await warm(invoke, sqsEvent([sqsRecord({ paymentId: `warm-${namespace}` }, { groupId: 'g9' })]), namespace, runs) } }
  }

  test('FIFO, crossing copies (group 1: copy of B, then A; group 2: B, then copy of A), one record at a time: no deadlock, each payment runs once, nothing reported failed', async () => {
    const runs: string[] = []
    const { namespace, invoke, warm } = fifo(runs, { concurrency: 1 })
    await warm()
    const b = sqsRecord({ paymentId: 'B' }, { groupId: 'g2' })
    const bCopy = sqsRecord({ paymentId: 'B' }, { groupId: 'g1' })
    const a = sqsRecord({ paymentId: 'A' }, { groupId: 'g1' })
    const aCopy = sqsRecord({ paymentId: 'A' }, { groupId: 'g2' })
    // Batch order: B is B's original, A is A's. g1 = [copy of B, A], g2 = [B, copy of A].
    const response = await invoke(sqsEvent([b, bCopy, a, aCopy]), lambdaContext())
    expect(failedIds(response)).toEqual([])
    // A ran only after its group's copy of B had B's result, so after B.
    expect(runs).toEqual(['B@g2', 'A@g1'])
    expect((await itemsOf(namespace)).map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED'])
  })

  test('FIFO, one payment in three groups: every copy waiting for it takes its result, and the invocation answers', async () => {
    const runs: string[] = []
    const released = deferred()
    // P runs until S, in a fourth group, has started: by then both copies wait for P.
    const { namespace, invoke, warm } = fifo(runs, {
      starting: async (payment) => {
        if (payment === 'P') await released.promise
        if (payment === 'S') released.resolve()
      }
    })
    await warm()
    const records = [
      sqsRecord({ paymentId: 'P' }, { groupId: 'g1' }),
      sqsRecord({ paymentId: 'P' }, { groupId: 'g2' }), sqsRecord({ paymentId: 'Q' }, { groupId: 'g2' }),
      sqsRecord({ paymentId: 'P' }, { groupId: 'g3' }), sqsRecord({ paymentId: 'R' }, { groupId: 'g3' }),
      sqsRecord({ paymentId: 'S' }, { groupId: 'g4' })
    ]
    // Bounded: a copy never woken would hold its group, and the invocation, forever.
    const response = await within(invoke(sqsEvent(records), lambdaContext()), 5000, 'the batch with P in three groups')
    expect(failedIds(response)).toEqual([])
    expect(runs.filter((r) => r.startsWith('P@'))).toEqual(['P@g1'])
    // Each copy's group went on behind P's result.
    expect(runs.indexOf('Q@g2')).toBeGreaterThan(runs.indexOf('P@g1'))
    expect(runs.indexOf('R@g3')).toBeGreaterThan(runs.indexOf('P@g1'))
    expect((await itemsOf(namespace)).map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED'])
  })

  test('FIFO, the original fails: its copy in another group fails with the same error, and the copy\'s later group-mates are held back (never run, released)', async () => {
    const runs: string[] = []
    const outcomes: OutcomeReport[] = []
    const { namespace, invoke, warm } = fifo(runs, { onFailure: 'fail', outcomes })
    await warm()
    outcomes.length = 0
    const p = sqsRecord({ paymentId: 'P', fail: true }, { groupId: 'g1' })
    const pCopy = sqsRecord({ paymentId: 'P', fail: true }, { groupId: 'g2' })
    const q = sqsRecord({ paymentId: 'Q' }, { groupId: 'g2' })
    const response = await invoke(sqsEvent([p, pCopy, q]), lambdaContext())
    expect(failedIds(response)).toEqual([p.messageId, pCopy.messageId, q.messageId])
    expect(runs).toEqual(['P@g1'])
    const outcomeOf = (record: SQSRecord): OutcomeReport | undefined => outcomes.find((o) => o.id === record.messageId)
    expect(outcomeOf(p)).toMatchObject({ kind: 'failed', error: new Error('declined P') })
    expect(outcomeOf(pCopy)).toMatchObject({ kind: 'in-batch-copy', error: outcomeOf(p)?.error })
    expect(outcomeOf(q)?.kind).toBe('held-back')
    expect(outcomeOf(q)?.error).toBeInstanceOf(IdempotencyHeldBackError)
    // P kept FAILED by the policy; Q released: no record.
    expect((await itemsOf(namespace)).map((i) => i.status)).toEqual(['FAILED'])
  })

  // Where the copy cannot wait: a hand-written handler, or a perRecord one on a cold instance's
  // first batch, before the middleware has seen perRecord take a batch over.
  test.each([
    ['FIFO, a hand-written handler (it cannot be made to wait)', { handWritten: true, warmed: true }],
    ['a cold instance (its first batch, the handler not yet known to be perRecord)', { handWritten: false, warmed: false }]
  ])('%s: the copy takes its original\'s result, and the rest of its group is held back, released, for a redelivery in order; the payment runs once', async (_name, { handWritten, warmed }) => {
    const runs: string[] = []
    const { namespace, invoke, warm } = fifo(runs, { handWritten })
    if (warmed) await warm()
    const p = sqsRecord({ paymentId: 'P' }, { groupId: 'g1' })
    const pCopy = sqsRecord({ paymentId: 'P' }, { groupId: 'g2' })
    const q = sqsRecord({ paymentId: 'Q' }, { groupId: 'g2' })
    const response = await invoke(sqsEvent([p, pCopy, q]), lambdaContext())
    expect(failedIds(response)).toEqual([q.messageId])
    expect(runs).toEqual(['P@g1'])
    expect((await itemsOf(namespace)).map((i) => i.status)).toEqual(['COMPLETED'])
  })
})
