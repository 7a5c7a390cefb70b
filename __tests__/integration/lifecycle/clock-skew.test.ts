import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, type IdempotencyStore } from '../../../src/index.js'
import { RedisStore } from '../../../src/redis.js'
import { deferred } from '../../support/deferred.js'
import { freshTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { redisClients, uniquePrefix } from '../../support/redis.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

/**
 * `clockSkewMs` on every store alike (DESIGN §5, clock skew between Lambda hosts): a claim judges
 * a record at its clock less the skew, so a record protects that much longer; a store that
 * expires keys itself (Redis) must keep them at least that long past their expiry.
 */

let table: Awaited<ReturnType<typeof freshTable>>
const clients = redisClients()
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop(); await clients.close() })

const stores: Array<[string, () => Promise<IdempotencyStore>]> = [
  ['MemoryStore', async () => new MemoryStore()],
  ['DynamoDBStore on DynamoDB Local', async () => table.store],
  ['RedisStore on redis-server', async () => new RedisStore({ client: await clients.nodeRedis(), keyPrefix: uniquePrefix('skew') })]
]

/** A consumer on `store` whose clock reads `now()`: what it ran, and its answers. */
const host = (store: IdempotencyStore, namespace: string, now: () => number, options: { clockSkewMs: number, expiresAfterSeconds?: number }, work: (record: SQSRecord) => Promise<void> = async () => {}) => {
  const ran: string[] = []
  const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace, key: 'body.paymentId', now, logger: false, ...options }))
    .handler(async (event) => await Promise.allSettled(event.Records.map(async (record) => { ran.push(record.messageId); await work(record) })))
  return { ran, handler }
}

describe.each(stores)('clockSkewMs, %s', (_name, makeStore) => {
  test('a COMPLETED record still protects, past its expiry by less than clockSkewMs, on a host whose clock trails the server\'s', async () => {
    const store = await makeStore()
    const namespace = `skew-${Math.random().toString(36).slice(2, 10)}`
    // The server's clock an hour on from the machine's: the record has expired by it, and is still
    // there. DynamoDB's TTL deletes an expired item within days; DynamoDB Local within seconds.
    const serverNow = Date.now() + 3_600_000
    // Host A charged 5 s ago (its clock is right) with a record that protects for about 2 s: by
    // the server's clock it expired a moment ago.
    const hostA = host(store, namespace, () => serverNow - 5000, { clockSkewMs: 6000, expiresAfterSeconds: 1 })
    const original = sqsRecord({ paymentId: 'pay-skew', amount: 100 })
    // A Lambda context of 30 s: its store calls are not cut short (a completion sets the expiry
    // from expiresAfterSeconds, whatever the lease was).
    expect(failedIds(await hostA.handler(sqsEvent([original]), lambdaContext()))).toEqual([])
    // Host B's clock trails the server's by 2 s (less than clockSkewMs): it judges the record at
    // its clock less 6 s, when the record still protects, and replays it.
    const hostB = host(store, namespace, () => serverNow - 2000, { clockSkewMs: 6000 })
    const duplicate = sqsRecord({ paymentId: 'pay-skew', amount: 100 })
    expect(failedIds(await hostB.handler(sqsEvent([duplicate]), lambdaContext()))).toEqual([])
    expect(hostB.ran).toEqual([])
  })

  test('with clockSkewMs covering the skew, a host whose clock runs ahead cannot take over a lease that is still running', async () => {
    const store = await makeStore()
    const namespace = `skew-${Math.random().toString(36).slice(2, 10)}`
    const start = Date.UTC(2030, 0, 1)
    let trueNow = start
    const charges: string[] = []
    const entered = deferred<void>()
    const release = deferred<void>()
    // Host A runs 3 s behind, host B 3 s ahead: 6 s apart.
    const hostA = host(store, namespace, () => trueNow - 3000, { clockSkewMs: 6000 }, async (r) => { entered.resolve(); await release.promise; charges.push(`A:${r.messageId}`) })
    const hostB = host(store, namespace, () => trueNow + 3000, { clockSkewMs: 6000 }, async (r) => { charges.push(`B:${r.messageId}`) })
    const original = sqsRecord({ paymentId: 'pay-lease', amount: 100 })
    const runA = hostA.handler(sqsEvent([original]), lambdaContext(() => start + 30_000 - trueNow))
    await entered.promise
    // 25 s later, 5 s before A's deadline, a duplicate reaches host B, whose clock says A's lease is over.
    trueNow = start + 25_000
    const duplicate = sqsRecord({ paymentId: 'pay-lease', amount: 100 })
    expect(failedIds(await hostB.handler(sqsEvent([duplicate]), lambdaContext(30_000)))).toEqual([duplicate.messageId])
    trueNow = start + 28_000
    release.resolve()
    await runA
    expect(charges).toEqual([`A:${original.messageId}`])
  })
})
