/** Kills the DynamoDB Local of the global setup (it is also killed on process exit). */
export default async function globalTeardown () {
  await globalThis.dynamoDBLocal?.stop()
}
