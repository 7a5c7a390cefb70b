import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { KinesisStreamEvent, KinesisStreamRecord, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord, type IdempotencyOptions } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const uid = (): string => Math.random().toString(36).slice(2, 10)
const statuses = async (namespace: string): Promise<unknown[]> =>
  (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => i.status).sort()

type Invoke = (event: unknown, context: unknown) => Promise<unknown>
const sqsStack = (handler: unknown, options: Partial<IdempotencyOptions> = {}) => {
  const namespace = `stress-${uid()}`
  const invoke = middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store: table.store, namespace, logger: false, ...options }))
    .handler(handler as never) as unknown as Invoke
  return { namespace, invoke }
}

describe('the batch engine under what users do', () => {
  test('a perRecord function that throws synchronously fails its record alone, released under the default onFailure', async () => {
    const runs: string[] = []
    const { namespace, invoke } = sqsStack(perRecord(((record: SQSRecord) => {
      runs.push(record.body)
      if (record.body === 'bad') throw new Error('sync throw')
      return 'ok'
    }) as never))
    const bad = sqsRecord('bad')
    const good = sqsRecord('good')
    const first = await invoke(sqsEvent([good, bad]), lambdaContext())
    expect(failedIds(first)).toEqual([bad.messageId])
    expect(await statuses(namespace)).toEqual(['COMPLETED'])
    expect(failedIds(await invoke(sqsEvent([redelivered(good), redelivered(bad)]), lambdaContext()))).toEqual([bad.messageId])
    expect(runs.filter((b) => b === 'good')).toHaveLength(1)
  })

  test('a hand-written handler that throws synchronously: every record is reported failed (sqsPartialBatchFailure answers the error), none is left IN_PROGRESS', async () => {
    const { namespace, invoke } = sqsStack(((event: SQSEvent) => { if (event.Records.length > 0) throw new Error('sync throw') }) as never)
    const records = [sqsRecord('a'), sqsRecord('b')]
    expect(failedIds(await invoke(sqsEvent(records), lambdaContext()))).toEqual(records.map((r) => r.messageId))
    expect(await statuses(namespace)).toEqual([])
  })

  test('one message delivered twice in one batch (same messageId): it runs once, and both entries are answered alike', async () => {
    let runs = 0
    const { invoke } = sqsStack(perRecord(async () => { runs++; return 'ok' }))
    const record = sqsRecord({ id: uid() })
    expect(await invoke(sqsEvent([record, redelivered(record)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(runs).toBe(1)
  })

  test('one message delivered twice in one batch whose work fails: it runs once, and its messageId is reported failed', async () => {
    let runs = 0
    const { namespace, invoke } = sqsStack(perRecord(async () => { runs++; throw new Error('declined') }))
    const record = sqsRecord({ id: uid() })
    const answer = await invoke(sqsEvent([record, redelivered(record)]), lambdaContext())
    expect(new Set(failedIds(answer))).toEqual(new Set([record.messageId]))
    expect(runs).toBe(1)
    expect(await statuses(namespace)).toEqual([])
  })

  test.each([
    ['perRecord', (fn: (r: SQSRecord) => Promise<unknown>) => perRecord(fn)],
    ['a hand-written allSettled handler', (fn: (r: SQSRecord) => Promise<unknown>) => async (event: SQSEvent) => await Promise.allSettled(event.Records.map(fn))]
  ])('producer duplicates under a key path in one batch, %s: the payment runs once, both are acknowledged; when it fails, both are reported', async (_name, wrap) => {
    const charged: string[] = []
    const ok = sqsStack(wrap(async (r) => { charged.push(r.messageId); return 'charged' }), { key: 'body.paymentId' })
    const paymentId = `p-${uid()}`
    expect(await ok.invoke(sqsEvent([sqsRecord({ paymentId }), sqsRecord({ paymentId })]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(charged).toHaveLength(1)
    expect(await statuses(ok.namespace)).toEqual(['COMPLETED'])

    const failing = sqsStack(wrap(async (r) => { charged.push(r.messageId); throw new Error('declined') }), { key: 'body.paymentId' })
    const first = sqsRecord({ paymentId })
    const second = sqsRecord({ paymentId })
    expect(failedIds(await failing.invoke(sqsEvent([first, second]), lambdaContext())).sort()).toEqual([first.messageId, second.messageId].sort())
    expect(charged).toHaveLength(2)
    expect(await statuses(failing.namespace)).toEqual([])
  })

  test('FIFO: a failing record in the middle of a group holds back the rest of its group only; the redelivery runs them once, in order', async () => {
    const order: string[] = []
    let fail = true
    const { namespace, invoke } = sqsStack(perRecord(async (r: SQSRecord) => {
      const { n } = JSON.parse(r.body) as { n: string }
      if (n === 'a2' && fail) throw new Error('declined')
      order.push(n)
      return n
    }))
    const a = ['a1', 'a2', 'a3'].map((n) => sqsRecord({ n }, { groupId: 'A' }))
    const b = ['b1', 'b2'].map((n) => sqsRecord({ n }, { groupId: 'B' }))
    const records = [a[0], b[0], a[1], b[1], a[2]] as SQSRecord[]
    expect(failedIds(await invoke(sqsEvent(records), lambdaContext()))).toEqual([a[1]?.messageId, a[2]?.messageId])
    expect(await statuses(namespace)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED'])
    fail = false
    expect(await invoke(sqsEvent([redelivered(a[1] as SQSRecord), redelivered(a[2] as SQSRecord)]), lambdaContext())).toEqual({ batchItemFailures: [] })
    expect(order.filter((n) => n.startsWith('a'))).toEqual(['a1', 'a2', 'a3'])
    expect(order.filter((n) => n.startsWith('b'))).toEqual(['b1', 'b2'])
  })

  test('Kinesis tumbling window: a failed record and the later one of its partition key are reported by sequence number, the earlier one COMPLETED', async () => {
    const namespace = `stress-${uid()}`
    const invoke = middy<KinesisStreamEvent>()
      .use(idempotency({ store: table.store, namespace, logger: false }))
      .handler(perRecord(async (r: KinesisStreamRecord) => {
        if (JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString()).bad === true) throw new Error('bad')
        return 'ok'
      }) as never) as unknown as Invoke
    const records = [kinesisRecord({ bad: false }, 'k'), kinesisRecord({ bad: true }, 'k'), kinesisRecord({ bad: false }, 'k')]
    const window = { window: { start: '2026-11-24T00:00:00Z', end: '2026-11-24T00:05:00Z' }, shardId: 'shardId-000', isFinalInvokeForWindow: false, isWindowTerminatedEarly: false, state: { total: 3 } }
    const answer = JSON.parse(JSON.stringify(await invoke({ ...kinesisEvent(records), ...window }, lambdaContext())))
    expect(answer.batchItemFailures).toEqual([1, 2].map((i) => ({ itemIdentifier: records[i]?.kinesis.sequenceNumber })))
    expect(await statuses(namespace)).toEqual(['COMPLETED'])
  })
})
