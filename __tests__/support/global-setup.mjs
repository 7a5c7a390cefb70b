import { startDynamoDBLocal } from '../../scripts/dynamodb-local.mjs'
import { startRedisCluster } from '../../scripts/redis-cluster.mjs'
import { startRedisServer } from '../../scripts/redis-server.mjs'

const unset = (name) => process.env[name] === undefined || process.env[name] === ''

/**
 * One DynamoDB Local, one Redis and one three-node Redis Cluster for the whole run (workers
 * inherit their addresses); each test file makes its own tables, and its own keys. REDIS_URL
 * (REDIS_CLUSTER_NODES) set by the user means a server (a cluster) they run: none is started.
 */
export default async function globalSetup () {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'
  const [local, redis, cluster] = await Promise.all([
    startDynamoDBLocal({ shortRun: true }),
    unset('REDIS_URL') ? startRedisServer() : Promise.resolve(undefined),
    unset('REDIS_CLUSTER_NODES') ? startRedisCluster() : Promise.resolve(undefined)
  ])
  process.env.DYNAMODB_ENDPOINT = local.endpoint
  if (redis !== undefined) process.env.REDIS_URL = redis.url
  if (cluster !== undefined) process.env.REDIS_CLUSTER_NODES = cluster.nodes.join(',')
  globalThis.dynamoDBLocal = local
  globalThis.redisServer = redis
  globalThis.redisCluster = cluster
}
