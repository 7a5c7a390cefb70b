/**
 * The typical SQS consumer on middy-idempotency with Redis (ElastiCache, Valkey): the same
 * handler as `ours.ts` (`perRecord` + sqs-partial-batch-failure), with `RedisStore` from its
 * own entry point and a node-redis client. `createOursRedisHandler` lets the bench give it a
 * client connected through the delaying proxy; `handler` is what a deployment exports and what
 * the bundle and cold-import measurements load. Its client is created, not connected: a
 * deployment adds `await client.connect()` at the top level, which needs a server, and which
 * costs both implementations the same.
 */
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent } from 'aws-lambda'
import { createClient } from 'redis'
import { idempotency, perRecord } from '../../src/batch.js'
import { RedisStore } from '../../src/redis.js'
import type { RedisClientLike } from '../../src/redis.js'
import { work } from './work.js'

/** `maxStoreRequests`: the middleware's option, left at its default (50) unless given. */
export const createOursRedisHandler = (
  { client, maxStoreRequests }: { client: RedisClientLike, maxStoreRequests?: number }
) =>
  middy<SQSEvent>()
    .use(sqsPartialBatchFailure())
    .use(idempotency({
      store: new RedisStore({ client }), ...(maxStoreRequests === undefined ? {} : { maxStoreRequests })
    }))
    .handler(perRecord(work))

export const handler = createOursRedisHandler({ client: createClient({ url: process.env.REDIS_URL }) })
