/** Stops the DynamoDB Local and the Redis of the global setup (both are also killed on process exit). */
export default async function globalTeardown () {
  await Promise.all([globalThis.dynamoDBLocal?.stop(), globalThis.redisServer?.stop()])
}
