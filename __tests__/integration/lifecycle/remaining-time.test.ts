import { afterEach, beforeEach, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import { createClient } from 'redis'
import { idempotency, type IdempotencyStore } from '../../../src/index.js'
import { RedisStore } from '../../../src/redis.js'
import type { IdempotencyRecord } from '../../../src/store.js'
import { recordOf } from '../../../src/stores/redis/record.js'
import { freshTable } from '../../support/dynamodb.js'
import { lambdaContext } from '../../support/sqs.js'
import { redisUrl, uniquePrefix } from '../../support/redis.js'

/**
 * A context whose getRemainingTimeInMillis() answers Number.MAX_SAFE_INTEGER (a test harness saying "never time
 * out"): its remaining time is read as Lambda's longest timeout, 900 s
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html). The store calls are not given up at
 * once (a setTimeout over 2^31-1 ms fires after 1 ms), the handler runs, and the lease it takes is at most 900 s,
 * so that the record is freed like any other.
 */

const MAX_LEASE_MS = 900_000

interface Target {
  store: IdempotencyStore
  /** The stored lease end (epoch ms), the expiry (epoch s) and how long the store keeps the record (ms, Redis). */
  stored: () => Promise<{ inProgressExpiry: number, expiry: number, keptMs?: number }>
  close: () => Promise<void>
}

const dynamodb = async (): Promise<Target> => {
  const table = await freshTable()
  return {
    store: table.store,
    stored: async () => {
      const [item] = await table.items()
      return { inProgressExpiry: item?.inProgressExpiry as number, expiry: item?.expiry as number }
    },
    close: table.drop
  }
}
const redis = async (): Promise<Target> => {
  const client = await createClient({ url: redisUrl() }).connect()
  const keyPrefix = uniquePrefix('remaining-time')
  const store = new RedisStore({ client, keyPrefix })
  return {
    store,
    stored: async () => {
      const [key] = await client.keys(`${keyPrefix}*`)
      const record = recordOf(key as string, await client.get(key as string)) as IdempotencyRecord
      return { inProgressExpiry: record.inProgressExpiry as number, expiry: record.expiry, keptMs: await client.pTTL(key as string) }
    },
    close: async () => { await client.close() }
  }
}

describe.each([['DynamoDB Local', dynamodb], ['redis-server', redis]])('a context answering MAX_SAFE_INTEGER, on %s', (_name, make) => {
  let target: Target
  beforeEach(async () => { target = await make() })
  afterEach(async () => { await target.close() })

  test('the handler runs once, under a lease of at most 900 s, and its duplicate is replayed', async () => {
    let seen: Awaited<ReturnType<Target['stored']>> | undefined
    let runs = 0
    // Middy's own early timeout is a setTimeout of the remaining time too, which overflows to 1 ms: off, as the
    // harness that answers MAX_SAFE_INTEGER must have it.
    const handler = middy({ timeoutEarlyInMillis: 0 })
      .use(idempotency({ store: target.store, namespace: 'clock', expiresAfterSeconds: 60, logger: false }))
      .handler(async () => { runs++; seen = await target.stored(); return { charged: 2500 } })
    const event = { source: 'app.payments', 'detail-type': 'Charge', id: 'evt-1', detail: { paymentId: 'p-1' } }
    const context = lambdaContext(Number.MAX_SAFE_INTEGER)

    const claimedAt = Date.now()
    expect(await handler(event, context)).toEqual({ charged: 2500 })
    expect(await handler(event, context)).toEqual({ charged: 2500 })
    expect(runs).toBe(1)

    expect(seen?.inProgressExpiry).toBeGreaterThanOrEqual(claimedAt + MAX_LEASE_MS)
    expect(seen?.inProgressExpiry).toBeLessThanOrEqual(Date.now() + MAX_LEASE_MS)
    // The record outlives its lease by a second at most, not 285,000 years.
    expect(seen?.expiry).toBeLessThanOrEqual(Math.ceil((Date.now() + MAX_LEASE_MS) / 1000) + 1)
    // Redis keeps the key until its expiry second ends, and a margin of 1 s for drifting clocks (store-options.ts).
    if (seen?.keptMs !== undefined) expect(seen.keptMs).toBeLessThanOrEqual(MAX_LEASE_MS + 5_000)
  })
})
