import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import {
  idempotency, IdempotencyInProgressError, IdempotencyPayloadMismatchError, IdempotencyStoreError, perRecord
} from '../../../src/index.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { admit, claim, judge } from '../../../src/lifecycle/claim.js'
import type { LifecycleConfig } from '../../../src/lifecycle/config.js'
import type { Unit } from '../../../src/keys/prepare.js'
import type { Lease } from '../../../src/lifecycle/deadline.js'
import type { IdempotencyRecord } from '../../../src/stores/store.js'
import { deferred } from '../../support/deferred.js'
import { countingClient, freshTable, localClient } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

// Two edges the chaos suite found (__tests__/chaos), kept here as minimal reproductions.

/** A promise and its resolver, to hold a handler at a point the test chooses. */
const gate = () => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { open, opened }
}

describe('claim: leases across hosts and lost answers', () => {
  test('with clockSkewMs covering the skew, a host whose clock runs ahead cannot take over a lease that is still running', async () => {
    const table = await freshTable()
    const start = Date.UTC(2030, 0, 1)
    let trueNow = start
    const charges: string[] = []
    // Host A runs 3 s behind, host B 3 s ahead: 6 s apart.
    const consumer = (skewMs: number, work: (record: SQSRecord) => Promise<void>) => middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, key: 'body.paymentId', clockSkewMs: 6000, now: () => trueNow + skewMs, logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(work)))
    const entered = gate()
    const release = gate()
    const hostA = consumer(-3000, async (r) => { entered.open(); await release.opened; charges.push(`A:${r.messageId}`) })
    const hostB = consumer(+3000, async (r) => { charges.push(`B:${r.messageId}`) })
    const deadlineA = start + 30_000

    const original = sqsRecord({ paymentId: 'pay-1', amount: 100 })
    const runA = hostA(sqsEvent([original]), lambdaContext(() => deadlineA - trueNow))
    await entered.opened
    // 25 s later, 5 s before A's deadline, the producer's duplicate reaches host B, whose clock
    // says A's lease (written by A's clock) is already over.
    trueNow = start + 25_000
    const duplicate = sqsRecord({ paymentId: 'pay-1', amount: 100 })
    const responseB = await hostB(sqsEvent([duplicate]), lambdaContext(30_000))
    trueNow = start + 28_000
    release.open()
    await runA

    expect(charges).toEqual([`A:${original.messageId}`])
    expect(failedIds(responseB)).toEqual([duplicate.messageId])
  })

  test('a claim whose answer was lost and retried by the SDK recognises its own record and runs', async () => {
    const client = localClient()
    let dropNextPutAnswer = true
    client.middlewareStack.add((next, context) => async (args) => {
      const output = await next(args)
      if ((context as { commandName?: string }).commandName === 'PutItemCommand' && dropNextPutAnswer) {
        dropNextPutAnswer = false
        throw Object.assign(new Error('socket timed out (injected)'), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} })
      }
      return output
    }, { step: 'finalizeRequest', name: 'loseOneClaimAnswer' })
    const table = await freshTable({ client })
    const store = new DynamoDBStore({ tableName: table.tableName, client })
    let runs = 0
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async () => { runs++ })))

    const record = sqsRecord({ paymentId: 'pay-2' })
    const response = await handler(sqsEvent([record]), lambdaContext(30_000))

    expect(dropNextPutAnswer).toBe(false)
    expect(runs).toBe(1)
    expect(failedIds(response)).toEqual([])
    expect((await table.items()).map((i) => i.status)).toEqual(['COMPLETED'])
  })
})

describe('claim: a claim\'s expiry', () => {
  let table: Awaited<ReturnType<typeof freshTable>>
  beforeAll(async () => { table = await freshTable() })
  afterAll(async () => { await table.drop() })

  describe.each(batchMiddyVersions)('%s', (_name, middy) => {
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
})

describe('claim, admit and judge on DynamoDB Local', () => {
  let table: Awaited<ReturnType<typeof freshTable>>
  let sent: string[]
  beforeAll(async () => {
    const counting = countingClient()
    sent = counting.sent
    table = await freshTable({ client: counting.client })
    // The store's first request also looks at the table's TTL once (table-check.ts): done here,
    // so that each test counts only its own requests.
    await table.store.read(['warm-up'])
  })
  afterAll(async () => { await table.drop() })

  const silent = (): void => {}
  const configOf = (expiresAfterSeconds = 3600): LifecycleConfig => ({
    store: table.store, expiresAfterSeconds, onFailure: 'delete', now: Date.now, clockSkewMs: 0,
    log: { debug: silent, info: silent, warn: silent, error: silent, writes: () => false }
  })
  const unitOf = (payloadHash = 'hash-1'): Unit =>
    ({ key: `k-${Math.random().toString(36).slice(2, 10)}`, payloadHash, attempt: 1 })
  const leaseOf = (ms = 60_000): Lease => ({ nowMs: Date.now(), until: Date.now() + ms })
  const storedOf = async (key: string): Promise<IdempotencyRecord | undefined> =>
    (await table.store.read([key])).get(key)
  /** Claims `unit` and completes it with `responseData`, as a finished run does. */
  const completed = async (unit: Unit, responseData: string): Promise<void> => {
    const decision = await claim(configOf(), unit, leaseOf())
    if (decision.kind !== 'run') throw new Error(`expected to run, got ${decision.kind}`)
    const expiry = Math.floor(Date.now() / 1000) + 3600
    await table.store.complete(unit.key, decision.leaseToken, { expiry, responseData })
  }

  test('a free key: one write makes us the owner, IN_PROGRESS under a fresh token until the lease ends, ' +
    'kept past a shorter expiresAfterSeconds', async () => {
    const unit = unitOf()
    const lease = leaseOf()
    sent.length = 0
    const decision = await claim(configOf(1), unit, lease)
    expect(sent).toEqual(['PutItem'])
    expect(decision).toEqual({ kind: 'run', leaseToken: expect.any(String) })
    const stored = await storedOf(unit.key)
    expect(stored).toMatchObject({ status: 'IN_PROGRESS', inProgressExpiry: lease.until, payloadHash: 'hash-1' })
    expect(stored?.leaseToken).toBe((decision as { leaseToken: string }).leaseToken)
    expect(stored?.expiry).toBeGreaterThan(lease.until / 1000)
  })

  test('a key completed before: its stored response is replayed', async () => {
    const unit = unitOf()
    await completed(unit, '{"paid":true}')
    expect(await claim(configOf(), unit, leaseOf())).toEqual({ kind: 'replay', response: { paid: true } })
  })

  test('a record read in bulk that still protects the key decides with no request', async () => {
    const unit = unitOf()
    await claim(configOf(), unit, leaseOf())
    const standing = await storedOf(unit.key)
    sent.length = 0
    const decision = await claim(configOf(), unit, leaseOf(), standing)
    expect(sent).toEqual([])
    expect(decision).toEqual({ kind: 'rejected', error: expect.any(IdempotencyInProgressError) })
  })

  test('the same key with another payload is refused as a mismatch', async () => {
    const unit = unitOf('hash-1')
    await completed(unit, '1')
    const decision = await claim(configOf(), { ...unit, payloadHash: 'hash-2' }, leaseOf())
    expect(decision).toEqual({ kind: 'rejected', error: expect.any(IdempotencyPayloadMismatchError) })
  })

  test('a stored response that is not JSON is refused as a store error naming the key, never replayed', async () => {
    const unit = unitOf()
    await completed(unit, 'not json')
    const decision = await claim(configOf(), unit, leaseOf())
    expect(decision).toEqual({ kind: 'rejected', error: expect.any(IdempotencyStoreError) })
    const { message } = (decision as { error: Error }).error
    expect(message).toBe(`the stored response of key ${unit.key} is not valid JSON`)
  })

  test("admit (effects: 'transact-only') runs a unit unclaimed with no request, " +
    'unless a record known to protect it decides', async () => {
    const unit = unitOf()
    sent.length = 0
    expect(admit(configOf(), unit, leaseOf())).toEqual({ kind: 'run', leaseToken: expect.any(String), unclaimed: true })
    expect(sent).toEqual([])
    await completed(unit, '"done"')
    expect(admit(configOf(), unit, leaseOf(), await storedOf(unit.key))).toEqual({ kind: 'replay', response: 'done' })
  })

  test('judge: a record of a status no store writes is refused as a store error naming the status', () => {
    const unit = unitOf()
    const decision = judge(configOf(), unit, { key: unit.key, status: 'PAUSED' as never, expiry: 0 })
    expect(decision).toEqual({ kind: 'rejected', error: expect.any(IdempotencyStoreError) })
    expect((decision as { error: Error }).error.message).toBe(`key ${unit.key} has an unknown status PAUSED`)
  })
})
