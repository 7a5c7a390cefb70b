import { afterAll } from '@jest/globals'
import { RedisStore } from '../../../src/redis.js'
import { describeWholeEvent } from '../../support/contracts/whole-event.js'
import { redisClients, uniquePrefix } from '../../support/redis.js'

// The same promises as the MemoryStore unit tests and DynamoDB Local, on a real redis-server.
const clients = redisClients()
afterAll(async () => { await clients.close() })

describeWholeEvent('RedisStore', async () => {
  const client = await clients.nodeRedis()
  const keyPrefix = uniquePrefix('whole-event')
  const store = new RedisStore({ client, keyPrefix })
  return {
    store,
    records: async () => {
      const keys = (await client.keys(`${keyPrefix}*`)).map((key) => key.slice(keyPrefix.length))
      return [...(await store.read(keys)).values()]
    }
  }
})
