/**
 * `npx tsx bench/latency-model.ts [records] [rounds]`: the all-new batch against a model of
 * real DynamoDB instead of DynamoDB Local. On 2 cores DynamoDB Local is throughput-bound
 * (a few hundred requests a second), so both implementations wait on the server and the
 * batch time hides how each one schedules its requests. Here every request succeeds after
 * a fixed round trip (RTT_MS, default 5) with at most 50 at once (the SDK's default socket
 * pool), so the time is the client's own schedule. Only the all-new workload can be modelled
 * this way (every request succeeds with an empty answer). Used to size `maxStoreRequests`.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { Context, SQSEvent } from 'aws-lambda'
import { performance } from 'node:perf_hooks'
import { createOursHandler } from './handlers/ours.js'
import { createTheirsHandler } from './handlers/theirs.js'
import { lambdaContext, roundOf } from './lib/events.js'
import { fmt, table } from './lib/report.js'
import { median } from './lib/stats.js'

process.env.AWS_LAMBDA_FUNCTION_NAME ??= 'bench-consumer'
const rttMs = Number(process.env.RTT_MS ?? 5)
const SOCKETS = 50

/** A real client (Powertools insists on one) whose requests never leave the process. */
const modelClient = (): DynamoDBClient => {
  const client = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'model', secretAccessKey: 'model' } })
  let active = 0
  const queue: Array<() => void> = []
  client.middlewareStack.add(() => async () => {
    if (active >= SOCKETS) await new Promise<void>((resolve) => queue.push(resolve))
    active++
    await new Promise((resolve) => setTimeout(resolve, rttMs))
    active--
    queue.shift()?.()
    return { output: { $metadata: {} }, response: {} }
  }, { step: 'initialize', name: 'dynamodbModel', priority: 'low' })
  return client
}

type Invoke = (event: SQSEvent, context: Context) => Promise<unknown>
const subjects: Array<[string, () => Invoke]> = [
  ['ours (maxStoreRequests 50, the default)',
    () => createOursHandler({ tableName: 'model', client: modelClient() }) as unknown as Invoke],
  ['ours (maxStoreRequests 32)',
    () => createOursHandler({ tableName: 'model', client: modelClient(), maxStoreRequests: 32 }) as unknown as Invoke],
  ['theirs', () => createTheirsHandler({ tableName: 'model', client: modelClient() }) as Invoke]
]

const records = Number(process.argv[2] ?? 100)
const rounds = Number(process.argv[3] ?? 10)
const times = new Map<string, number[]>(subjects.map(([name]) => [name, []]))
// Round -1 warms up; then interleaved rounds.
for (let round = -1; round < rounds; round++) {
  for (const [name, make] of subjects) {
    const invoke = make()
    const { timed } = roundOf('all new', records)
    const start = performance.now()
    await invoke(timed, lambdaContext('bench-consumer'))
    if (round >= 0) times.get(name)?.push(performance.now() - start)
  }
}
process.stdout.write(`All new, ${records} records, modelled round trip ${rttMs} ms, ${SOCKETS} sockets, ${rounds} rounds\n\n`)
process.stdout.write(table(['implementation', 'median ms', 'min ms'], [...times].map(([name, ms]) => [name, fmt(median(ms), 1), fmt(Math.min(...ms), 1)])) + '\n')
