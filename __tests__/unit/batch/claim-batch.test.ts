import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import { Batch } from '../../../src/batch/batch.js'
import { claimBatch, groupsOf, prepareRecords } from '../../../src/batch/claim-batch.js'
import type { RecordState } from '../../../src/batch/record-state.js'
import {
  idempotency, IdempotencyConfigError, IdempotencyHeldBackError, IdempotencyKeyError, IdempotencyPayloadMismatchError,
  MemoryStore
} from '../../../src/index.js'
import { compileSelector, storedKey } from '../../../src/keys/selector.js'
import type { Selection } from '../../../src/keys/prepare.js'
import { sourceOf } from '../../../src/sources/index.js'
import type { BatchSource } from '../../../src/sources/source.js'
import type { LifecycleConfig } from '../../../src/lifecycle/config.js'
import { allSettledConsumer as consumer, CountingStore, waitUntil } from '../../support/memory-stores.js'
import { lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

const fifo = sourceOf(sqsEvent([sqsRecord('x', { groupId: 'g' })])) as BatchSource
const byId: Selection = {
  namespace: 'claims',
  key: compileSelector('body.id', 'key'),
  keyName: 'key path "body.id"',
  payload: compileSelector('body', 'payload')
}

/** A batch of `records` prepared as the middleware does, on `store`, not yet claimed. */
const batchOf = (
  store: CountingStore, records: Array<ReturnType<typeof sqsRecord>>
): { batch: Batch, config: LifecycleConfig } => {
  const silent = (): void => {}
  const config: LifecycleConfig = {
    store, expiresAfterSeconds: 60, onFailure: 'delete', now: Date.now, clockSkewMs: 0,
    log: { debug: silent, info: silent, warn: silent, error: silent, writes: () => false }
  }
  const event = sqsEvent(records)
  const nowMs = Date.now()
  const lease = { nowMs, until: nowMs + 60_000 }
  const limits = { maxStoreRequests: 4, recordConcurrency: 4, timeoutMarginMs: 0 }
  const prepared = prepareRecords(fifo, byId, records, {}, event)
  return { batch: new Batch(fifo, config, limits, event, prepared, lease, {}), config }
}
const fateOf = (state: RecordState | undefined): string | undefined => state?.fate.kind

describe('prepareRecords and groupsOf: what is taken of each record before the handler runs', () => {
  test('each record gets its key and its ordering group; a record whose key cannot be taken fails alone', () => {
    const records = [
      sqsRecord({ id: 1 }, { groupId: 'a' }),
      sqsRecord({ other: 1 }, { groupId: 'a' }),
      sqsRecord({ id: 2 }, { groupId: 'b' })
    ]
    const [one, keyless, two] = prepareRecords(fifo, byId, records, {})
    const unit = expect.objectContaining({ key: storedKey('claims', 1), attempt: 1 })
    expect(one?.fate).toEqual({ kind: 'keyed', unit })
    expect(keyless?.fate).toEqual({ kind: 'unkeyed', error: expect.any(IdempotencyKeyError) })
    expect([one?.group, keyless?.group, two?.group]).toEqual(['a', 'a', 'b'])
  })

  test('a record without its identity is refused for the whole batch, naming what it lacks: ' +
    'its failure could not be reported', () => {
    const nameless = { ...sqsRecord({ id: 1 }), messageId: undefined }
    expect(() => prepareRecords(fifo, byId, [nameless], {})).toThrow(IdempotencyConfigError)
    expect(() => prepareRecords(fifo, byId, [nameless], {}))
      .toThrow('idempotency: every aws:sqs record needs a string messageId (it is how a failure is reported)')
  })

  test('groupsOf keeps each group\'s records in batch order, the ungrouped ones together', () => {
    const items = [{ group: 'b', n: 1 }, { n: 2 }, { group: 'a', n: 3 }, { group: 'b', n: 4 }, { n: 5 }]
    const groups = [...groupsOf(items)].map(([group, members]) => [group, members.map((m) => m.n)])
    expect(groups).toEqual([['b', [1, 4]], ['', [2, 5]], ['a', [3]]])
  })
})

describe('claimBatch on a MemoryStore', () => {
  test('a copy with another payload is refused as a mismatch; its original is claimed, one claim', async () => {
    const store = new CountingStore()
    const { batch, config } = batchOf(store, [
      sqsRecord({ id: 1, amount: 10 }, { groupId: 'a' }), sqsRecord({ id: 1, amount: 99 }, { groupId: 'b' })
    ])
    await claimBatch(config, fifo, 4, batch, batch.lease)
    const [original, copy] = batch.records
    expect(fateOf(original)).toBe('claimed')
    const mismatch = { kind: 'rejected', error: expect.any(IdempotencyPayloadMismatchError) }
    expect(copy?.fate).toMatchObject({ kind: 'decided', decision: mismatch })
    expect(store.calls).toEqual(['claim'])
  })

  test('ordered: a group stops at its first record that cannot run; the rest are held back without a request, ' +
    'other groups go on', async () => {
    const store = new CountingStore()
    const now = Date.now()
    const elsewhere = { expiry: now / 1000 + 60, inProgressExpiry: now + 60_000, leaseToken: 'elsewhere' }
    await store.claim({ key: storedKey('claims', 1), status: 'IN_PROGRESS', ...elsewhere }, now)
    store.calls = []
    const { batch, config } = batchOf(store, [
      sqsRecord({ id: 1 }, { groupId: 'a' }),
      sqsRecord({ id: 2 }, { groupId: 'a' }),
      sqsRecord({ id: 3 }, { groupId: 'b' })
    ])
    await claimBatch(config, fifo, 4, batch, batch.lease)
    const [busy, behind, other] = batch.records
    expect(busy?.fate).toMatchObject({ kind: 'decided', decision: { kind: 'rejected' } })
    const heldBack = { kind: 'rejected', error: expect.any(IdempotencyHeldBackError) }
    expect(behind?.fate).toMatchObject({ kind: 'decided', decision: heldBack })
    const { error } = (behind?.fate as { decision: { error: Error } }).decision
    expect(error.message).toMatch(/an earlier record of message group a/)
    expect(fateOf(other)).toBe('claimed')
    expect(store.calls).toEqual(['claim', 'claim'])
  })
})

describe('claimBatch through the middleware, on a MemoryStore', () => {
  test('redelivered records are read in one request and replayed without any write', async () => {
    const store = new CountingStore()
    const { invoke } = consumer(store, async () => 'ok')
    const records = [sqsRecord('a'), sqsRecord('b'), sqsRecord('c')]
    await invoke(records)
    store.calls = []
    expect(await invoke(records.map(redelivered))).toEqual({ batchItemFailures: [] })
    expect(store.calls).toEqual(['read'])
  })

  test('a failed read before claiming falls back to claims, and says so', async () => {
    const store = new CountingStore()
    const logger = recordingLogger()
    const { invoke } = consumer(store, async () => 'ok', { logger })
    const record = sqsRecord('a')
    await invoke([record])
    store.failOn.add('read')
    store.calls = []
    expect(await invoke([redelivered(record)])).toEqual({ batchItemFailures: [] })
    expect(store.calls).toEqual(['read', 'claim'])
    expect(logger.lines).toEqual([expect.objectContaining({ level: 'warn' })])
  })

  test('reads of many redeliveries stay within maxStoreRequests, as many keys a read as the store takes (100)', async () => {
    const store = new CountingStore({ limits: { maxResponseBytes: 1024 * 1024, maxReadKeys: 100 } })
    const { invoke } = consumer(store, async () => 'ok', { maxStoreRequests: 2 })
    const records = Array.from({ length: 500 }, (_, i) => sqsRecord(i))
    await invoke(records)
    store.calls = []
    store.maxInFlight = 0
    expect(await invoke(records.map(redelivered))).toEqual({ batchItemFailures: [] })
    expect(store.calls).toEqual(['read', 'read', 'read', 'read', 'read'])
    expect(store.maxInFlight).toBe(2)
  })

  test('in a mixed batch, first deliveries are claimed while the redeliveries are being read', async () => {
    const store = new CountingStore()
    const { invoke } = consumer(store, async () => 'ok')
    const old = sqsRecord('old')
    await invoke([old])
    let releaseRead!: () => void
    const readHeld = new Promise<void>((resolve) => { releaseRead = resolve })
    const read = store.read.bind(store)
    store.read = async (keys) => { await readHeld; return await read(keys) }
    store.calls = []
    const running = invoke([redelivered(old), sqsRecord('new 1'), sqsRecord('new 2')])
    await waitUntil(() => store.calls.filter((c) => c === 'claim').length === 2)
    expect(store.calls).toEqual(['claim', 'claim'])
    releaseRead()
    expect(await running).toEqual({ batchItemFailures: [] })
    expect(store.calls.filter((c) => c === 'claim')).toHaveLength(2)
  })

  test('the key is taken before the handler runs: mutating the record does not change it', async () => {
    const store = new MemoryStore()
    const { invoke, seen } = consumer(store, async (r) => { (r as { body: string }).body = JSON.stringify({ orderId: 'changed' }); return 'ok' }, { key: 'body.orderId' })
    const record = sqsRecord({ orderId: 'o-1' })
    await invoke([structuredClone(record)])
    await invoke([redelivered(record)])
    expect(seen).toHaveLength(1)
    expect(store.records()).toHaveLength(1)
  })

  test('FIFO: the same key in two message groups, in progress elsewhere: the copy shares its original\'s refusal and holds its own group back', async () => {
    const store = new MemoryStore()
    const seen: string[] = []
    const handler = middy<SQSEvent>()
      .use(idempotency({ store, namespace: 'fifo-copies', key: 'body.paymentId', logger: false }))
      .handler(async (event) => { seen.push(...event.Records.map((r) => r.messageId)); return await Promise.allSettled(event.Records.map(async () => 1)) })
    await store.claim({ key: storedKey('fifo-copies', 'P'), status: 'IN_PROGRESS', expiry: Date.now() / 1000 + 60, inProgressExpiry: Date.now() + 60_000, leaseToken: 'elsewhere' }, Date.now())
    const a1 = sqsRecord({ paymentId: 'P' }, { groupId: 'A' })
    const b1 = sqsRecord({ paymentId: 'P' }, { groupId: 'B' })
    const b2 = sqsRecord({ paymentId: 'Q' }, { groupId: 'B' })
    const response = await handler(sqsEvent([a1, b1, b2]), lambdaContext())
    expect(seen).toEqual([])
    expect(response).toEqual({ batchItemFailures: [a1, b1, b2].map((r) => ({ itemIdentifier: r.messageId })) })
  })

  test('an in-batch copy whose primary fails fails with the same error', async () => {
    const store = new MemoryStore()
    const boom = new Error('declined')
    const handler = middy<SQSEvent>().use(idempotency({ store, key: 'body.id', logger: false })).handler(async (e) => await Promise.allSettled(e.Records.map(async () => { throw boom })))
    const response = await handler(sqsEvent([sqsRecord({ id: 1 }), sqsRecord({ id: 1 })]), lambdaContext())
    expect(response).toEqual([{ status: 'rejected', reason: boom }, { status: 'rejected', reason: boom }])
  })
})
