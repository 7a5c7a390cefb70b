import { afterAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { idempotency, makeIdempotent, IdempotencyStoreError, perRecord, type IdempotencyStore } from '../../../src/index.js'
import * as batchOnly from '../../../src/batch.js'
import * as eventOnly from '../../../src/event.js'
import { DynamoDBStore } from '../../../src/dynamodb.js'
import { RedisStore } from '../../../src/redis.js'
import { blackhole, closedPort } from '../../support/blackhole.js'
import { endpoint, freshTable, localClient } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, recordingLogger, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

// A store that never answers (a blackholed DynamoDB endpoint, a Redis that is down with the
// client's defaults queueing commands offline) must not keep Lambda past its deadline: every
// store call is given up at the deadline less timeoutMarginMs, Lambda gets its answer with the
// unfinished records failed, and the log names the call that hung. The deadline is that of a
// Lambda context following a real clock, 2 s away (1.5 s for idempotent(fn), whose margin is 1 s),
// with a margin that leaves the hung call half a second: the answer must come before the deadline.

// The tests run at once (`test.concurrent`): each waits for a deadline a few seconds away, on the
// real clock. What they leave open is closed once they are all done.
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A Lambda context whose deadline is `ms` from now, and that deadline. */
const invocation = (ms: number) => {
  const deadline = Date.now() + ms
  return { deadline, context: lambdaContext(() => deadline - Date.now()) }
}

/** The error fields of every line the log was given. */
const loggedErrors = (logger: ReturnType<typeof recordingLogger>): string[] =>
  logger.lines.map((line) => String((line.entry as { error?: { message?: string } }).error?.message))

// Each entry point that takes batches (or whole events).
const batchEntries: Array<[string, typeof idempotency]> = [['middy-idempotency', idempotency], ['middy-idempotency/batch', batchOnly.idempotency]]
const eventEntries: Array<[string, typeof idempotency]> = [['middy-idempotency', idempotency], ['middy-idempotency/event', eventOnly.idempotency]]

const hungStores: Array<[string, () => Promise<IdempotencyStore>]> = [
  ['DynamoDBStore on a TCP blackhole', async () => {
    const hole = await blackhole()
    cleanups.push(hole.close)
    return new DynamoDBStore({ tableName: 'never-answers', client: localClient({ endpoint: hole.url }) })
  }],
  ['RedisStore with a node-redis client (defaults) on a closed port', async () => {
    const client = createClient({ url: `redis://127.0.0.1:${await closedPort()}` })
    client.on('error', () => {})
    // What a handler module does at cold start: connect without waiting, and go on.
    client.connect().catch(() => {})
    cleanups.push(() => { client.destroy() })
    return new RedisStore({ client })
  }],
  ['RedisStore with an ioredis client (defaults) on a closed port', async () => {
    const client = new Redis(await closedPort(), '127.0.0.1')
    client.on('error', () => {})
    cleanups.push(() => { client.disconnect() })
    return new RedisStore({ client })
  }]
]

describe.each(hungStores)('%s', (_name, hungStore) => {
  test.concurrent.each(batchEntries)('an SQS batch through %s is answered before the deadline, every record reported failed, the hung claim named in the log', async (_entry, entryIdempotency) => {
    const logger = recordingLogger()
    let ran = 0
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(entryIdempotency({ store: await hungStore(), namespace: 'hung', logger, timeoutMarginMs: 1500 }))
      .handler(perRecord(async () => { ran++ }))
    const records = [sqsRecord({ n: 1 }), sqsRecord({ n: 2 }), sqsRecord({ n: 3 }, { receiveCount: 2 })]
    const { deadline, context } = invocation(2000)
    const response = await handler(sqsEvent(records), context)
    expect(Date.now()).toBeLessThan(deadline)
    expect(failedIds(response)).toEqual(records.map((r) => r.messageId))
    expect(ran).toBe(0)
    expect(loggedErrors(logger)).toContainEqual(expect.stringMatching(/^claim of key hung#\S+ did not answer within \d+ ms/))
  })

  test.concurrent.each(eventEntries)('a whole event through %s fails before the deadline with an IdempotencyStoreError naming the hung claim; the handler does not run', async (_entry, entryIdempotency) => {
    let ran = 0
    const handler = middy<{ orderId: string }>()
      .use(entryIdempotency({ store: await hungStore(), namespace: 'hung', logger: false, timeoutMarginMs: 1500 }))
      .handler(async () => { ran++; return 'charged' })
    const { deadline, context } = invocation(2000)
    const error = await handler({ orderId: 'o-1' }, context).catch((e: unknown) => e)
    expect(Date.now()).toBeLessThan(deadline)
    expect(error).toBeInstanceOf(IdempotencyStoreError)
    expect(error).toMatchObject({ operation: 'claim', message: expect.stringMatching(/^claim of key hung#\S+ did not answer within \d+ ms/) })
    expect(ran).toBe(0)
  })

  test.concurrent('makeIdempotent(fn) given the Lambda context rejects before the deadline with an IdempotencyStoreError naming the hung claim; fn does not run', async () => {
    let ran = 0
    const charge = makeIdempotent(async (order: { orderId: string }, _context: unknown) => { ran++; return `charged ${order.orderId}` }, { store: await hungStore(), namespace: 'hung', logger: false })
    const { deadline, context } = invocation(1500)
    const error = await charge({ orderId: 'o-1' }, context).catch((e: unknown) => e)
    expect(Date.now()).toBeLessThan(deadline)
    expect(error).toBeInstanceOf(IdempotencyStoreError)
    expect(error).toMatchObject({ operation: 'claim', message: expect.stringMatching(/^claim of key hung#\S+ did not answer within \d+ ms/) })
    expect(ran).toBe(0)
  })
})

test.concurrent('node-redis\'s TimeoutError, which has no message, is named by its class', async () => {
  // node-redis gives up on a command it could not send after commandOptions.timeout (5 s by
  // default), with its TimeoutError: 300 ms here, the same error sooner.
  const client = createClient({ url: `redis://127.0.0.1:${await closedPort()}`, commandOptions: { timeout: 300 } })
  client.on('error', () => {})
  client.connect().catch(() => {})
  cleanups.push(() => { client.destroy() })
  const logger = recordingLogger()
  const handler = middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store: new RedisStore({ client }), namespace: 'hung', logger, timeoutMarginMs: 1000 }))
    .handler(perRecord(async () => 'ok'))
  // A deadline far enough for node-redis to give up on its own first.
  const record = sqsRecord({ n: 1 })
  expect(failedIds(await handler(sqsEvent([record]), invocation(15_000).context))).toEqual([record.messageId])
  expect(loggedErrors(logger)).toContainEqual(expect.stringMatching(/^claim of key hung#\S+ on Redis \(node-redis client.*\) failed: TimeoutError \(no message\)$/))
})

test.concurrent('a completion that hangs after the work ran: the record is reported failed and keeps its lease (onFailure delete does not release it)', async () => {
  const table = await freshTable()
  cleanups.push(table.drop)
  const { hostname, port } = new URL(endpoint())
  const proxy = await blackhole({ host: hostname, port: Number(port) })
  cleanups.push(proxy.close)
  const store = new DynamoDBStore({ tableName: table.tableName, client: localClient({ endpoint: proxy.url }) })
  const logger = recordingLogger()
  let runs = 0
  const consumer = (now?: () => number) => middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace: 'hung-completion', logger, timeoutMarginMs: 2000, onFailure: 'delete', ...(now === undefined ? {} : { now }) }))
    .handler(perRecord(async (_record: SQSRecord) => {
      runs++
      // The first run's work is done; from here on the store answers nothing.
      if (runs === 1) proxy.hold()
      return 'charged'
    }))
  const record = sqsRecord({ orderId: 'o-1' })
  const { deadline, context } = invocation(4000)
  expect(failedIds(await consumer()(sqsEvent([record]), context))).toEqual([record.messageId])
  expect(Date.now()).toBeLessThan(deadline)
  expect(runs).toBe(1)
  expect(loggedErrors(logger)).toContainEqual(expect.stringMatching(/^complete of key hung-completion#\S+ did not answer within \d+ ms/))

  proxy.lift()
  // The completion may have landed or not; it did not here (the proxy swallowed it), so the
  // record stays ours until its lease (the first invocation's deadline) lapses.
  expect(await table.items()).toEqual([expect.objectContaining({ status: 'IN_PROGRESS', inProgressExpiry: expect.any(Number) })])
  expect(failedIds(await consumer()(sqsEvent([redelivered(record)]), lambdaContext()))).toEqual([record.messageId])
  expect(runs).toBe(1)
  // Once the lease has lapsed, a redelivery runs it (the work's own idempotency is then the guard).
  expect(failedIds(await consumer(() => deadline + 1000)(sqsEvent([redelivered(record)]), lambdaContext()))).toEqual([])
  expect(runs).toBe(2)
})

/**
 * DynamoDB Local behind a proxy that answers until the test holds it: the store then hangs on
 * whatever is sent next. The consumer's records hold it from inside their work, then fail.
 */
const storeThatHangsAfterWork = async () => {
  const table = await freshTable()
  cleanups.push(table.drop)
  const { hostname, port } = new URL(endpoint())
  const proxy = await blackhole({ host: hostname, port: Number(port) })
  cleanups.push(proxy.close)
  return { table, proxy, store: new DynamoDBStore({ tableName: table.tableName, client: localClient({ endpoint: proxy.url }) }) }
}

// Middy's early timeout is off, so that only the middleware's own bound on these writes can answer
// in time. Without that bound the handler never answers: each test's own timeout then fails it
// well before Jest's default.
test.concurrent("a failure kept FAILED (onFailure 'fail') whose fail write hangs: the batch is answered before the deadline, the record reported failed and left IN_PROGRESS", async () => {
  const { table, proxy, store } = await storeThatHangsAfterWork()
  const logger = recordingLogger()
  const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace: 'hung-fail', logger, timeoutMarginMs: 2000, onFailure: 'fail' }))
    .handler(perRecord(async () => {
      proxy.hold()
      throw new Error('card declined')
    }))
  const record = sqsRecord({ orderId: 'o-1' })
  const { deadline, context } = invocation(4000)
  expect(failedIds(await handler(sqsEvent([record]), context))).toEqual([record.messageId])
  expect(Date.now()).toBeLessThan(deadline)
  expect(loggedErrors(logger)).toContainEqual(expect.stringMatching(/^fail of key hung-fail#\S+ did not answer within \d+ ms/))
  proxy.lift()
  // The proxy swallowed the fail: the record keeps its lease until it lapses.
  expect(await table.items()).toEqual([expect.objectContaining({ status: 'IN_PROGRESS' })])
}, 15_000)

test.concurrent("release writes that hang (onFailure 'delete', and the record held back behind it): the batch is answered before the deadline, both records reported failed and left IN_PROGRESS", async () => {
  const { table, proxy, store } = await storeThatHangsAfterWork()
  const logger = recordingLogger()
  let runs = 0
  const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace: 'hung-release', logger, timeoutMarginMs: 2000, onFailure: 'delete' }))
    .handler(perRecord(async () => {
      runs++
      proxy.hold()
      throw new Error('card declined')
    }))
  // One FIFO group: the second record is claimed, then held back once the first fails.
  const records = [sqsRecord({ orderId: 'o-1' }, { groupId: 'g1' }), sqsRecord({ orderId: 'o-2' }, { groupId: 'g1' })]
  const { deadline, context } = invocation(4000)
  expect(failedIds(await handler(sqsEvent(records), context))).toEqual(records.map((r) => r.messageId))
  expect(Date.now()).toBeLessThan(deadline)
  expect(runs).toBe(1)
  expect(loggedErrors(logger).filter((message) => /^release of key hung-release#\S+ did not answer within \d+ ms/.test(message))).toHaveLength(2)
  proxy.lift()
  expect((await table.items()).map((item) => item.status)).toEqual(['IN_PROGRESS', 'IN_PROGRESS'])
}, 15_000)
