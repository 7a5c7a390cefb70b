import { afterAll } from '@jest/globals'
import { RedisStore } from '../../../src/redis.js'
import { describeStoreContract } from '../../support/contracts/store.js'
import { redisClients, uniquePrefix } from '../../support/redis.js'

// The contract on a real redis-server, through each client family users bring.
const clients = redisClients()
afterAll(async () => { await clients.close() })

describeStoreContract('RedisStore with node-redis', async () => new RedisStore({ client: await clients.nodeRedis(), keyPrefix: uniquePrefix('contract') }))

describeStoreContract('RedisStore with ioredis', async () => new RedisStore({ client: await clients.ioredis(), keyPrefix: uniquePrefix('contract') }), { modelRuns: 30, burstRuns: 30 })

describeStoreContract('RedisStore with a plain { sendCommand(args) }', async () => {
  const client = await clients.nodeRedis()
  return new RedisStore({ client: { sendCommand: async (args: string[]) => await client.sendCommand(args) }, keyPrefix: uniquePrefix('contract') })
}, { modelRuns: 20, burstRuns: 20 })
