import { afterAll } from '@jest/globals'
import { RedisStore } from '../../../src/redis.js'
import { describeWholeEvent } from '../../support/contracts/whole-event.js'
import { redisClients, uniquePrefix, type Family } from '../../support/redis.js'

// The same promises as the MemoryStore unit tests and DynamoDB Local, on a real redis-server,
// through each client family users bring.
const clients = redisClients()
afterAll(async () => { await clients.close() })

const families: Array<[string, Family]> = [['node-redis', 'nodeRedis'], ['ioredis', 'ioredis'], ['Valkey GLIDE', 'glide']]
for (const [name, family] of families) {
  describeWholeEvent(`RedisStore (${name})`, async () => {
    const admin = await clients.nodeRedis()
    const keyPrefix = uniquePrefix('whole-event')
    const store = new RedisStore({ client: await clients[family](), keyPrefix })
    return {
      store,
      records: async () => {
        const keys = (await admin.keys(`${keyPrefix}*`)).map((key) => key.slice(keyPrefix.length))
        return [...(await store.read(keys)).values()]
      }
    }
  })
}
