import { afterAll } from '@jest/globals'
import { RedisStore } from '../../../src/redis.js'
import { describeStoreContract } from '../../support/contracts/store.js'
import { clusterFamilies, otherVersionFamilies, redisClients, singleNodeFamilies, uniquePrefix } from '../../support/redis.js'

// The contract, its reference model included, on a real redis-server and a real three-node
// Redis Cluster, through each client family users bring. Fewer runs than on MemoryStore: each
// command is a few round trips, and the suite runs three times in CI.
const clients = redisClients()
afterAll(async () => { await clients.close() })

for (const family of [...singleNodeFamilies, ...clusterFamilies]) {
  describeStoreContract(`RedisStore with ${family}`, async () => new RedisStore({ client: await clients[family](), keyPrefix: uniquePrefix('contract') }),
    { modelRuns: 25, burstRuns: 20 })
}

// node-redis v4 and v5, ioredis 6 and iovalkey: the same contract, fewer runs of its model.
for (const family of otherVersionFamilies) {
  describeStoreContract(`RedisStore with ${family}`, async () => new RedisStore({ client: await clients[family](), keyPrefix: uniquePrefix('contract') }),
    { modelRuns: 10, burstRuns: 5 })
}

describeStoreContract('RedisStore with a plain { sendCommand(args) }', async () => {
  const client = await clients.nodeRedis()
  return new RedisStore({ client: { sendCommand: async (args: string[]) => await client.sendCommand(args) } })
}, { modelRuns: 15, burstRuns: 10 })
