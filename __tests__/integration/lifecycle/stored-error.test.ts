import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, IdempotencyFailedError, perRecord, type IdempotencyStore } from '../../../src/index.js'
import { storedKey } from '../../../src/keys/selector.js'
import { RedisStore } from '../../../src/redis.js'
import { freshTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { redisClients, uniquePrefix } from '../../support/redis.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

/**
 * A FAILED record's error, read back through a real store, is the truncated message: cut at a
 * character boundary (an emoji straddling the limit is dropped whole), valid UTF-8 on the wire,
 * and replayed as it was stored.
 */

const wellFormed = (text: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)

// 960 UTF-16 units are kept before the "… (truncated …)" note: the emoji takes units 959-960.
const message = `${'a'.repeat(959)}😀${'b'.repeat(4000)}`
const truncated = `${'a'.repeat(959)}… (truncated from ${message.length} characters)`

let table: Awaited<ReturnType<typeof freshTable>>
const clients = redisClients()
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop(); await clients.close() })

const stores: Array<[string, () => Promise<IdempotencyStore>]> = [
  ['DynamoDBStore on DynamoDB Local', async () => table.store],
  ['RedisStore on redis-server', async () => new RedisStore({ client: await clients.nodeRedis(), keyPrefix: uniquePrefix('stored-error') })]
]

describe.each(stores)('a truncated error message, %s', (_name, makeStore) => {
  test('the FAILED record read back holds the message cut before the emoji, and a redelivery replays it', async () => {
    const store = await makeStore()
    const namespace = `stored-error-${Math.random().toString(36).slice(2, 10)}`
    const replayed: unknown[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      // When no record of a batch runs, the middleware answers early: onOutcome tells each record's error.
      .use(idempotency({ store, namespace, onFailure: 'fail', logger: recordingLogger(), onOutcome: ({ error }) => { replayed.push(error) } }))
      .handler(perRecord(async () => { throw Object.assign(new Error(message), { name: 'GatewayError' }) }))
    const record = sqsRecord({ amount: 5 })
    expect(failedIds(await handler(sqsEvent([record]), lambdaContext()))).toEqual([record.messageId])

    const stored = (await store.read?.([storedKey(namespace, record.messageId)]))?.get(storedKey(namespace, record.messageId))
    expect(stored).toMatchObject({ status: 'FAILED', error: { name: 'GatewayError', message: truncated } })
    expect(wellFormed(String(stored?.error?.message))).toBe(true)

    replayed.length = 0
    expect(failedIds(await handler(sqsEvent([redelivered(record)]), lambdaContext()))).toEqual([record.messageId])
    const replay = replayed[0] as IdempotencyFailedError
    expect(replay).toBeInstanceOf(IdempotencyFailedError)
    expect(replay.message).toContain(truncated)
  })
})
