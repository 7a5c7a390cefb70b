import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { APIGatewayProxyEventV2, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, IdempotencyInProgressError, perRecord, type IdempotencyOptions, type OutcomeReport, type RecordTools } from '../../../src/index.js'
import * as eventOnly from '../../../src/event.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { deferred } from '../../support/deferred.js'
import { countingClient, freshTable } from '../../support/dynamodb.js'
import { httpApiEvent } from '../../support/http.js'
import { batchMiddyVersions, middyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

// Lambda Managed Instances: one process, one handler instance, many invocations at once.
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-managed-instances.html

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const statusesOf = async (namespace: string): Promise<Map<string, unknown>> =>
  new Map((await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => [i.idempotencyKey as string, i.status]))

type Invoke = (event: unknown, context: unknown) => Promise<unknown>

describe.each(batchMiddyVersions)('one handler instance serving concurrent invocations, %s', (_name, middy) => {
  /** One handler instance: every invocation of a test goes through the same Middy stack. */
  const instance = (fn: (record: SQSRecord, tools: RecordTools) => Promise<unknown>, options: Partial<IdempotencyOptions> & { timeoutEarlyInMillis?: number } = {}) => {
    const namespace = `managed-${Math.random().toString(36).slice(2, 10)}`
    const { timeoutEarlyInMillis, ...rest } = options
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: timeoutEarlyInMillis ?? 0 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger(), ...rest }))
      .handler(perRecord(fn))
    return { namespace, invoke: handler as unknown as Invoke }
  }

  test('one invocation timing out aborts only its own records\' signal: the other\'s records never see an abort, and complete', async () => {
    const slow = sqsRecord({ invocation: 'short' })
    const others = [sqsRecord({ invocation: 'long', n: 1 }), sqsRecord({ invocation: 'long', n: 2 })]
    const shortAnswered = deferred()
    const othersStarted = deferred()
    let started = 0
    const abortedInLong: boolean[] = []
    const { namespace, invoke } = instance(async (record, { signal }) => {
      if (record.messageId === slow.messageId) {
        // A request given the signal: the abort stops the wait, not the request.
        await new Promise((_resolve, reject) => { signal.addEventListener('abort', () => { reject(signal.reason) }) })
        return
      }
      if (++started === others.length) othersStarted.resolve()
      await shortAnswered.promise
      abortedInLong.push(signal.aborted)
      return 'charged'
    }, { onFailure: 'delete', timeoutEarlyInMillis: 1000 })
    const long = invoke(sqsEvent(others), lambdaContext(30_000))
    await othersStarted.promise
    const deadline = Date.now() + 1500
    const short = await invoke(sqsEvent([slow]), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    expect(failedIds(short)).toEqual([slow.messageId])
    shortAnswered.resolve()
    expect(failedIds(await long)).toEqual([])
    expect(abortedInLong).toEqual([false, false])
    const statuses = await statusesOf(namespace)
    expect([...statuses.values()].sort()).toEqual(['COMPLETED', 'COMPLETED', 'IN_PROGRESS'])
  })

  test('an invocation times out before its handler reached perRecord: the one batch perRecord is running for another invocation is not closed, its records never see an abort', async () => {
    const namespace = `managed-${Math.random().toString(36).slice(2, 10)}`
    const othersStarted = deferred()
    const shortAnswered = deferred()
    const abortedInLong: boolean[] = []
    const inner = perRecord<SQSEvent>(async (_record, { signal }) => {
      othersStarted.resolve()
      await shortAnswered.promise
      abortedInLong.push(signal.aborted)
    })
    const never = new Promise<never>(() => {})
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 1000 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: recordingLogger() }))
      // The short invocation's handler is still loading something when its time is up.
      .handler(async (event, context, options) => JSON.parse(event.Records[0]?.body ?? '{}').loading === true ? await never : await inner(event, context, options))
    const invoke = handler as unknown as Invoke
    const long = invoke(sqsEvent([sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]), lambdaContext(30_000))
    await othersStarted.promise
    const deadline = Date.now() + 1500
    const short = [sqsRecord({ loading: true })]
    expect(failedIds(await invoke(sqsEvent(short), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error))).toEqual([short[0]?.messageId])
    shortAnswered.resolve()
    expect(failedIds(await long)).toEqual([])
    expect(abortedInLong).toEqual([false, false])
    expect([...(await statusesOf(namespace)).values()].sort()).toEqual(['COMPLETED', 'COMPLETED', 'IN_PROGRESS'])
  })

  test('batches overlapping in keys, one timing out while the other finishes: each key runs once, the overlap is refused as in progress, the timed-out record keeps its lease, the rest complete', async () => {
    const bAnswered = deferred()
    const aStarted = deferred()
    const runs: string[] = []
    const outcomes: OutcomeReport[] = []
    const { namespace, invoke } = instance(async (record, { signal }) => {
      const { paymentId } = JSON.parse(record.body) as { paymentId: string }
      runs.push(paymentId)
      if (paymentId === 'X') { aStarted.resolve(); await bAnswered.promise }
      if (paymentId === 'Z') await new Promise((_resolve, reject) => { signal.addEventListener('abort', () => { reject(signal.reason) }) })
      return paymentId
    }, { key: 'body.paymentId', onFailure: 'fail', timeoutEarlyInMillis: 1000, onOutcome: (o) => { outcomes.push(o) } })
    const a = [sqsRecord({ paymentId: 'X' }), sqsRecord({ paymentId: 'Y' })]
    const b = [sqsRecord({ paymentId: 'X' }), sqsRecord({ paymentId: 'Z' })]
    const first = invoke(sqsEvent(a), lambdaContext(30_000))
    await aStarted.promise
    const deadline = Date.now() + 1500
    const second = await invoke(sqsEvent(b), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    bAnswered.resolve()
    expect(failedIds(second).sort()).toEqual(b.map((r) => r.messageId).sort())
    expect(outcomes.find((o) => o.id === b[0]?.messageId)?.error).toBeInstanceOf(IdempotencyInProgressError)
    expect(failedIds(await first)).toEqual([])
    expect(runs.sort()).toEqual(['X', 'Y', 'Z'])
    expect([...(await statusesOf(namespace)).values()].sort()).toEqual(['COMPLETED', 'COMPLETED', 'IN_PROGRESS'])
  })

  test('a cold instance: its first invocation fails in a validator while a concurrent one succeeds; the refused records are released (none FAILED), the other\'s COMPLETED', async () => {
    const namespace = `managed-${Math.random().toString(36).slice(2, 10)}`
    const validatorRead = deferred()
    const validRan = deferred()
    const runs: string[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .use({
        // Like @middy/validator: reads the records; this one fails once the other invocation has run its record.
        before: async (request: { event: SQSEvent }) => {
          if (request.event.Records.some((r) => JSON.parse(r.body).invalid === true)) {
            validatorRead.resolve()
            await validRan.promise
            throw new Error('event is invalid')
          }
        }
      })
      .handler(perRecord(async (record: SQSRecord) => { runs.push(record.messageId); validRan.resolve() }))
    const invalid = [sqsRecord({ invalid: true }), sqsRecord({ n: 2 })]
    const valid = [sqsRecord({ n: 3 })]
    const refused = (handler as unknown as Invoke)(sqsEvent(invalid), lambdaContext())
    await validatorRead.promise
    const served = await (handler as unknown as Invoke)(sqsEvent(valid), lambdaContext())
    expect(failedIds(served)).toEqual([])
    expect(failedIds(await refused)).toEqual(invalid.map((r) => r.messageId))
    expect(runs).toEqual([valid[0]?.messageId])
    expect([...(await statusesOf(namespace)).values()]).toEqual(['COMPLETED'])
  })

  test('the local cache, shared by concurrent invocations: a redelivery of a record another invocation completed replays with no store request; one still running is never served from it', async () => {
    const { client, sent } = countingClient()
    const store = new DynamoDBStore({ tableName: table.tableName, client })
    const namespace = `managed-${Math.random().toString(36).slice(2, 10)}`
    const release = deferred()
    const slowStarted = deferred()
    const runs: string[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store, namespace, localCacheSize: 100, logger: recordingLogger() }))
      .handler(perRecord(async (record: SQSRecord) => {
        runs.push(record.messageId)
        if (JSON.parse(record.body).slow === true) { slowStarted.resolve(); await release.promise }
        return record.messageId
      }))
    const invokeOn = handler as unknown as (event: SQSEvent, context: unknown) => Promise<unknown>
    const done = sqsRecord({ n: 1 })
    const slow = sqsRecord({ slow: true })
    const running = invokeOn(sqsEvent([slow]), lambdaContext())
    await slowStarted.promise
    expect(failedIds(await invokeOn(sqsEvent([done]), lambdaContext()))).toEqual([])
    sent.length = 0
    const again = await invokeOn(sqsEvent([redelivered(done), redelivered(slow)]), lambdaContext())
    // The completed one replays from the cache; the running one is read from the store, and refused.
    expect(failedIds(again)).toEqual([slow.messageId])
    expect(runs).toEqual([slow.messageId, done.messageId])
    expect(sent).toEqual(['BatchGetItem'])
    release.resolve()
    expect(failedIds(await running)).toEqual([])
  })
})

describe.each(middyVersions)('one HTTP handler instance serving concurrent callers, %s', (_name, middy) => {
  test('two callers with the same Idempotency-Key at once: the work runs once; the other gets 409 while it runs, the replay once it is done', async () => {
    const namespace = `managed-http-${Math.random().toString(36).slice(2, 10)}`
    const started = deferred()
    const finish = deferred()
    let runs = 0
    const handler = middy<APIGatewayProxyEventV2>()
      .use(idempotency({ store: table.store, namespace, logger: false }))
      .handler(async () => {
        runs++
        started.resolve()
        await finish.promise
        return { statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"chargeId":"ch-1"}' }
      })
    const invoke = handler as unknown as (event: unknown, context: unknown) => Promise<{ statusCode: number, headers?: Record<string, string>, body?: string }>
    const first = invoke(httpApiEvent({ key: 'pay-1' }), lambdaContext())
    await started.promise
    const during = await invoke(httpApiEvent({ key: 'pay-1' }), lambdaContext())
    expect(during.statusCode).toBe(409)
    finish.resolve()
    expect((await first).statusCode).toBe(201)
    const after = await invoke(httpApiEvent({ key: 'pay-1' }), lambdaContext())
    expect(after).toMatchObject({ statusCode: 201, body: '{"chargeId":"ch-1"}', headers: { 'Idempotent-Replayed': 'true' } })
    expect(runs).toBe(1)
  })
})

// Whole events, through each entry point that takes them: Middy 5 and 6 share one AbortController
// across the process, so one invocation's early timeout must not end another's record (Middy 5
// too: these handlers return a value, which Middy 5 can replay).
const eventEntries: Array<[string, typeof idempotency]> = [['middy-idempotency', idempotency], ['middy-idempotency/event', eventOnly.idempotency]]

describe.each(eventEntries)('one whole-event handler instance through %s', (_entry, entry) => describe.each(batchMiddyVersions)('serving concurrent invocations, %s', (_name, middy) => {
  test('one invocation timing out leaves the other\'s record alone: the other answers its own result and is COMPLETED, the timed-out one keeps its lease', async () => {
    const namespace = `managed-event-${Math.random().toString(36).slice(2, 10)}`
    const longStarted = deferred()
    const shortAnswered = deferred()
    const outcomes: OutcomeReport[] = []
    const handler = middy<{ orderId: string }>({ timeoutEarlyInMillis: 1000 })
      .use(entry({ store: table.store, namespace, logger: false, onFailure: 'delete', onOutcome: (o) => { outcomes.push(o) } }))
      .handler(async (event: { orderId: string }) => {
        if (event.orderId === 'short') return await new Promise(() => {})
        longStarted.resolve()
        await shortAnswered.promise
        return `charged ${event.orderId}`
      })
    const invoke = handler as unknown as Invoke
    const long = invoke({ orderId: 'long' }, lambdaContext(30_000))
    await longStarted.promise
    const deadline = Date.now() + 1500
    const short = await invoke({ orderId: 'short' }, lambdaContext(() => deadline - Date.now())).then(() => 'answered', (error: unknown) => error)
    expect(short).toBeInstanceOf(Error)
    shortAnswered.resolve()
    expect(await long).toBe('charged long')
    expect([...(await statusesOf(namespace)).values()].sort()).toEqual(['COMPLETED', 'IN_PROGRESS'])
    expect(outcomes.filter((o) => o.kind === 'timed-out')).toHaveLength(1)
  })
}))
