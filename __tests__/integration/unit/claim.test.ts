import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency } from '../../../src/index.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { freshTable, localClient } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

// Two edges the chaos suite found (__tests__/chaos), kept here as minimal reproductions.

/** A promise and its resolver, to hold a handler at a point the test chooses. */
const gate = () => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { open, opened }
}

describe('leases across hosts and lost answers', () => {
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
