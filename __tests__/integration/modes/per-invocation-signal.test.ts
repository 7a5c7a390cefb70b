import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord, type RecordTools } from '../../../src/index.js'
import { deferred } from '../../support/deferred.js'
import { freshTable } from '../../support/dynamodb.js'
import { middy7, middy7_6_5, sqsPartialBatchFailure, type Middy } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

/*
 * Lambda Managed Instances run several invocations in one process. @middy/core 7.0 to 7.6.5 (as
 * 5 and 6) hand every invocation one shared AbortController, and abort it when any of them times
 * out; 7.6.6 and later give each invocation its own. perRecord must not tell them apart by the
 * major version: a record's `signal` aborts for its own invocation's timeout only, on both.
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-managed-instances.html
 */

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

type Invoke = (event: unknown, context: unknown) => Promise<unknown>

const cores: Array<[string, Middy, boolean]> = [
  // [name, middy, whether Middy's own signal is shared by the invocations of a process]
  ['@middy/core 7.6.5 (one AbortController per module)', middy7_6_5, true],
  ['@middy/core 7.x installed, 7.6.6 or later (one per invocation)', middy7, false]
]

describe.each(cores)('%s', (_name, middy, shared) => {
  test('two concurrent invocations, one timing out: the other\'s records are not aborted, and complete', async () => {
    const namespace = `signal-${Math.random().toString(36).slice(2, 10)}`
    const slow = sqsRecord({ invocation: 'short' })
    const others = [sqsRecord({ invocation: 'long', n: 1 }), sqsRecord({ invocation: 'long', n: 2 })]
    const othersStarted = deferred()
    const shortAnswered = deferred()
    let started = 0
    const abortedInLong: boolean[] = []
    const middySignals = new Map<string, AbortSignal>()
    const inner = perRecord<SQSEvent>(async (record: SQSRecord, { signal }: RecordTools) => {
      if (record.messageId === slow.messageId) {
        // Work that only ends when its signal aborts: the short invocation's timeout.
        await new Promise((_resolve, reject) => { signal.addEventListener('abort', () => { reject(signal.reason) }) })
        return
      }
      if (++started === others.length) othersStarted.resolve()
      await shortAnswered.promise
      abortedInLong.push(signal.aborted)
      return 'charged'
    })
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 1000 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, onFailure: 'delete', logger: recordingLogger() }))
      .handler(async (event, context, options) => {
        // What Middy itself hands each invocation, to show which kind of Middy this is.
        middySignals.set(event.Records[0]?.messageId ?? '', options.signal)
        return await inner(event, context, options)
      })
    const invoke = handler as unknown as Invoke

    const long = invoke(sqsEvent(others), lambdaContext(30_000))
    await othersStarted.promise
    const deadline = Date.now() + 1500
    const short = await invoke(sqsEvent([slow]), lambdaContext(() => deadline - Date.now())).catch((error: unknown) => error)
    expect(failedIds(short)).toEqual([slow.messageId])
    shortAnswered.resolve()
    expect(failedIds(await long)).toEqual([])

    // Middy's own signal, handed to the long invocation: aborted by the short one's timeout only
    // where the controller is shared.
    expect(middySignals.get(others[0]?.messageId ?? '')?.aborted).toBe(shared)
    // perRecord's signal, whichever Middy: never aborted by another invocation's timeout.
    expect(abortedInLong).toEqual([false, false])
    const statuses = (await table.items()).filter((i) => String(i.idempotencyKey).startsWith(`${namespace}#`)).map((i) => i.status)
    expect(statuses.sort()).toEqual(['COMPLETED', 'COMPLETED', 'IN_PROGRESS'])
  })
})
