import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord, type IdempotencyOptions, type RecordTools } from '../../../src/index.js'
import { deferred } from '../../support/deferred.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

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
})
