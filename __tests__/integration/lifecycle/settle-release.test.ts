import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, perRecord, type OutcomeReport } from '../../../src/index.js'
import { freshTable, localClient } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

// The writes that settle a record, fenced by the claim's lease token, when a write lands on
// DynamoDB Local and its answer is lost: the SDK retries it, and the retry meets what the first
// attempt left.

/** A DynamoDB Local client that loses the answer of the first `command` it sends (the write lands). */
const clientLosingFirstAnswerOf = (command: string) => {
  const client = localClient()
  const lost = { count: 0 }
  client.middlewareStack.add((next, context) => async (args) => {
    const output = await next(args)
    if ((context as { commandName?: string }).commandName === command && lost.count === 0) {
      lost.count++
      throw Object.assign(new Error('socket timed out (injected)'), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} })
    }
    return output
  }, { step: 'finalizeRequest', name: `loseFirst${command}Answer` })
  return { client, lost }
}

/** A logger that keeps every line, whatever its level. */
const everyLine = () => {
  const lines: Array<{ level: string, message: string }> = []
  const at = (level: string) => (entry: unknown) => { lines.push({ level, message: String((entry as { message?: unknown }).message) }) }
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } }
}

describe('release', () => {
  test("a release whose DeleteItem landed and lost its answer: reported as released (onFailure 'delete'), not as a lease lost to another invocation; a redelivery runs", async () => {
    const { client, lost } = clientLosingFirstAnswerOf('DeleteItemCommand')
    const table = await freshTable({ client })
    const { lines, logger } = everyLine()
    const outcomes: OutcomeReport[] = []
    let runs = 0
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace: 'lost-release', logger, onFailure: 'delete', onOutcome: (outcome) => outcomes.push(outcome) }))
      .handler(perRecord(async () => {
        if (++runs === 1) throw new Error('card declined')
        return 'charged'
      }))
    const record = sqsRecord({ orderId: 'o-1' })

    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])
    expect(lost.count).toBe(1)
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'failed', onFailure: 'delete' })])
    expect(lines.filter((line) => /lease lost|belongs to another/.test(line.message))).toEqual([])
    expect(lines).toContainEqual({ level: 'info', message: expect.stringMatching(/already gone.*released/) })
    expect(await table.items()).toEqual([])

    expect(failedIds(await handler(sqsEvent([redelivered(record)]), lambdaContext()))).toEqual([])
    expect(runs).toBe(2)
    await table.drop()
  })
})
