import { startDynamoDBLocal } from '../../scripts/dynamodb-local.mjs'
import { startRedisServer } from '../../scripts/redis-server.mjs'

/**
 * One DynamoDB Local and one Redis for the whole run (workers inherit their addresses); each
 * test file makes its own tables, and its own keys. REDIS_URL set by the user means a server
 * they run: none is started.
 */
export default async function globalSetup () {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'
  const [local, redis] = await Promise.all([
    startDynamoDBLocal(),
    process.env.REDIS_URL === undefined || process.env.REDIS_URL === '' ? startRedisServer() : Promise.resolve(undefined)
  ])
  process.env.DYNAMODB_ENDPOINT = local.endpoint
  if (redis !== undefined) process.env.REDIS_URL = redis.url
  globalThis.dynamoDBLocal = local
  globalThis.redisServer = redis
}
