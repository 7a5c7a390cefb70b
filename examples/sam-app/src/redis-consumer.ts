/**
 * The SQS payment consumer of `sqs-consumer.ts`, with its records in Redis (Valkey, Redis OSS,
 * ElastiCache) instead of DynamoDB: the same handler, another store. The client is created
 * once, outside the handler, and connected on the first invocation (a Lambda in the cache's
 * VPC; `rediss://` when the cache encrypts in transit). Durability is the server's: see
 * middy-idempotency's README on persistence before trusting money to it. Deployed by
 * `../template.yaml` when its RedisUrl parameter is set.
 */
import { createClient } from 'redis'
import { RedisStore } from 'middy-idempotency/redis'
import { chargeWithGateway, createHandler } from './sqs-consumer.js'

const client = createClient({ url: process.env.REDIS_URL ?? 'redis://localhost:6379' })
// node-redis reports a dropped connection as an 'error' event, which ends the process when
// nobody listens; logged, the client reconnects by itself.
client.on('error', (error: unknown) => { console.error('redis client error', error) })
const connected = client.connect()

const consumer = createHandler({ store: new RedisStore({ client, keyPrefix: 'payments:' }), charge: chargeWithGateway })

export const handler = async (...args: Parameters<typeof consumer>): Promise<unknown> => {
  await connected
  return await consumer(...args)
}
