/** Stops the DynamoDB Local, the Redis and the Redis Cluster of the global setup (all are also killed on process exit). */
export default async function globalTeardown () {
  await Promise.all([globalThis.dynamoDBLocal?.stop(), globalThis.redisServer?.stop(), globalThis.redisCluster?.stop()])
}
