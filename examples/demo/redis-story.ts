import { execFileSync } from 'node:child_process'
import { createClient } from 'redis'
import { startRedisServer } from '../../scripts/redis-server.mjs'
import { RedisStore } from '../../src/redis.js'
import { createHandler } from '../sam-app/src/sqs-consumer.js'
import { CardGateway } from './card-gateway.js'
import { heading, table } from './print.js'
import { lambdaContext, message, redelivery } from './sqs-messages.js'
import type { StoryResult } from './story.js'

const onPath = (name: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * 12: the SQS payment consumer on RedisStore, when a Redis is at hand (REDIS_URL, or a
 * redis-server or valkey-server on the PATH); otherwise the scene says how to turn it on.
 * The demo installs nothing.
 */
export const redisStory = async (): Promise<StoryResult> => {
  const problems: string[] = []
  const found = process.env.REDIS_URL !== undefined && process.env.REDIS_URL !== ''
    ? 'url'
    : onPath('redis-server') || onPath('valkey-server') ? 'binary' : undefined
  heading('12. The same consumer, its records in Redis (RedisStore)',
    'One Lua script per step, fenced by the lease token; a redelivery costs one read.')
  if (found === undefined) {
    console.log('  skipped: no Redis here. Set REDIS_URL=redis://host:port, ' +
      'or install redis-server (Debian: apt-get install redis-server), and run npm run demo again.')
    return { problems, summary: 'Redis: scene skipped (no Redis found; see scene 12 for how to turn it on).' }
  }
  const server = found === 'binary' ? await startRedisServer() : undefined
  const client = await createClient({ url: server?.url ?? process.env.REDIS_URL }).connect()
  try {
    const gateway = new CardGateway('ch_redis_')
    const handler = createHandler({
      store: new RedisStore({ client, keyPrefix: `demo-${Date.now()}:` }),
      charge: gateway.charge,
      logger: false,
      logFailedRecord: () => {}
    })
    const invoke = handler as unknown as (event: unknown, context: unknown) => Promise<{ batchItemFailures: unknown[] }>
    const batch = [
      message({ paymentId: 'pay-2001', amount: 1500, currency: 'EUR', cardToken: 'tok_visa_4242' }),
      message({ paymentId: 'pay-2002', amount: 700, currency: 'EUR', cardToken: 'tok_visa_1881' })
    ]
    const first = await invoke({ Records: batch }, lambdaContext())
    const again = await invoke({ Records: batch.map(redelivery) }, lambdaContext())
    table(['delivery', 'failed', 'charges so far'], [
      ['first', String(first.batchItemFailures.length), String(gateway.ledger.length)],
      ['redelivered (acknowledgement lost)', String(again.batchItemFailures.length), String(gateway.ledger.length)]
    ])
    for (const id of ['pay-2001', 'pay-2002']) {
      if (gateway.chargesOf(id) !== 1) problems.push(`Redis: ${id} was charged ${gateway.chargesOf(id)} times, not 1`)
    }
    const where = server === undefined ? 'REDIS_URL' : 'a redis-server started for the demo'
    return { problems, summary: `Redis: 2 payments in 4 deliveries, ${gateway.ledger.length} charges (on ${where}).` }
  } finally {
    await client.quit()
    await server?.stop()
  }
}
