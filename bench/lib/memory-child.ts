/**
 * Child process: one big batch through ours, alone in its process, so that its peak memory is
 * not mixed with the rest of the benchmark. Prints one JSON line on stdout.
 * argv: endpoint, records, workload ('new' | 'duplicates'), concurrency, source ('sqs' | 'kafka'),
 * measure ('rss' | 'live').
 *
 * Two figures per record, each from its own process: `live`, what stays reachable while the batch
 * runs (the heap after a full collection, sampled; needs --expose-gc), which is what the engine
 * holds; `rss`, the growth of the process's RSS with the collector left alone, which also counts
 * garbage not yet collected (most of it the SDK's request objects). Forcing collections would
 * hide that garbage, so the RSS run forces none. Source `store-only`: the same claims and
 * completions sent straight to a DynamoDBStore, with no middleware, no engine and no handler —
 * what the SDK alone costs.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { performance } from 'node:perf_hooks'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { forEachBounded } from '../../src/batch/schedule.js'
import { DynamoDBStore } from '../../src/dynamodb.js'
import { createOursHandler } from '../handlers/ours.js'
import { createOursKafkaHandler, kafkaBatch } from '../handlers/ours-kafka.js'
import { lambdaContext, redelivered, roundOf } from './events.js'
import { instrument, resetMeter, totalAttempts } from './instrument.js'
import { createTableFor, dropTable } from './tables.js'

const [endpoint = '', recordsArg = '10000', workload = 'new', concurrencyArg = '50', source = 'sqs', measure = 'rss'] = process.argv.slice(2)
const records = Number(recordsArg)
const concurrency = Number(concurrencyArg)
const gc = (globalThis as { gc?: () => void }).gc
if (measure === 'live' && gc === undefined) throw new Error('memory-child needs node --expose-gc to measure the live heap')
const collect = (): void => { if (measure === 'live') gc?.() }

const admin = new DynamoDBClient(localClientConfig(endpoint))
const client = new DynamoDBClient(localClientConfig(endpoint))
const meter = instrument(client)
const tableName = await createTableFor(admin, 'ours')
type Handler = (event: unknown, context: unknown) => Promise<unknown>
try {
  const handler = (source === 'kafka'
    ? createOursKafkaHandler({ tableName, client, maxStoreRequests: concurrency })
    : source === 'store-only'
      ? storeOnly(new DynamoDBStore({ tableName, client }), concurrency)
      : createOursHandler({ tableName, client, maxStoreRequests: concurrency })) as unknown as Handler
  const batchOf = (size: number): { first: unknown, again: unknown } => {
    if (source === 'kafka') {
      const batch = kafkaBatch(size)
      return { first: batch, again: batch }
    }
    const { timed } = roundOf('all new', size)
    return { first: timed, again: { Records: timed.Records.map(redelivered) } }
  }
  const context = lambdaContext('bench-consumer')
  // A small batch first, so that code loaded lazily (the SDK's, ours) is in the baseline.
  await handler(batchOf(100).first, context)
  const { first, again } = batchOf(records)
  if (workload === 'duplicates') await handler(first, context)
  const event = workload === 'duplicates' ? again : first
  resetMeter(meter)
  collect()
  const before = process.memoryUsage()
  let heapPeakLive = before.heapUsed
  let rssPeakSampled = before.rss
  const rssSampler = setInterval(() => { rssPeakSampled = Math.max(rssPeakSampled, process.memoryUsage().rss) }, 5)
  const heapSampler = setInterval(() => { if (measure !== 'live') return; collect(); heapPeakLive = Math.max(heapPeakLive, process.memoryUsage().heapUsed) }, 100)
  const start = performance.now()
  const response = await handler(event, context) as { batchItemFailures: unknown[] }
  const ms = performance.now() - start
  // The answer itself is live until Lambda has it: measured with the batch still reachable.
  collect()
  if (measure === 'live') heapPeakLive = Math.max(heapPeakLive, process.memoryUsage().heapUsed)
  clearInterval(rssSampler)
  clearInterval(heapSampler)
  process.stdout.write(JSON.stringify({
    records,
    source,
    measure,
    workload,
    concurrency,
    ms,
    failed: response.batchItemFailures.length,
    requests: totalAttempts(meter),
    attempts: meter.attempts,
    maxInFlight: meter.maxInFlight,
    heapBeforeBytes: before.heapUsed,
    heapPeakLiveBytes: heapPeakLive,
    rssBeforeBytes: before.rss,
    rssPeakSampledBytes: rssPeakSampled,
    // resourceUsage().maxRSS is in kilobytes, and covers the whole life of the process.
    maxRssBytes: process.resourceUsage().maxRSS * 1024
  }) + '\n')
} finally {
  await dropTable(admin, tableName)
}

/** A claim and a completion per record, straight to the store, `concurrency` at a time: the SDK's own cost. */
function storeOnly (store: DynamoDBStore, concurrency: number): Handler {
  return async (event) => {
    const nowMs = Date.now()
    await forEachBounded((event as { Records: Array<{ messageId: string }> }).Records, concurrency, async ({ messageId }) => {
      const key = `bench#${messageId}`
      await store.claim({ key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + 3600, inProgressExpiry: nowMs + 60_000, leaseToken: messageId }, nowMs)
      await store.complete(key, messageId, { expiry: Math.floor(nowMs / 1000) + 3600, responseData: JSON.stringify({ ok: true, id: messageId }) })
    })
    return { batchItemFailures: [] }
  }
}
