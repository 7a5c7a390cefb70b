/**
 * Child process: one big batch through ours, alone in its process, so that its peak RSS
 * is not mixed with the rest of the benchmark. Prints one JSON line on stdout.
 * argv: endpoint, records, workload ('new' | 'duplicates'), concurrency.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { performance } from 'node:perf_hooks'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { createOursHandler } from '../handlers/ours.js'
import { lambdaContext, redelivered, roundOf } from './events.js'
import { instrument, resetMeter, totalAttempts } from './instrument.js'
import { createTableFor, dropTable } from './tables.js'

const [endpoint = '', recordsArg = '10000', workload = 'new', concurrencyArg = '50'] = process.argv.slice(2)
const records = Number(recordsArg)
const concurrency = Number(concurrencyArg)

const admin = new DynamoDBClient(localClientConfig(endpoint))
const client = new DynamoDBClient(localClientConfig(endpoint))
const meter = instrument(client)
const tableName = await createTableFor(admin, 'ours')
try {
  const handler = createOursHandler({ tableName, client, concurrency })
  const context = lambdaContext('bench-consumer')
  const { timed } = roundOf('all new', records)
  if (workload === 'duplicates') await handler(timed, context)
  const event = workload === 'duplicates' ? { Records: timed.Records.map(redelivered) } : timed
  resetMeter(meter)
  const rssBefore = process.memoryUsage().rss
  let rssPeakSampled = rssBefore
  const sampler = setInterval(() => { rssPeakSampled = Math.max(rssPeakSampled, process.memoryUsage().rss) }, 5)
  const start = performance.now()
  const response = await handler(event, context) as { batchItemFailures: unknown[] }
  const ms = performance.now() - start
  clearInterval(sampler)
  process.stdout.write(JSON.stringify({
    records,
    workload,
    concurrency,
    ms,
    failed: response.batchItemFailures.length,
    requests: totalAttempts(meter),
    attempts: meter.attempts,
    maxInFlight: meter.maxInFlight,
    rssBeforeBytes: rssBefore,
    rssPeakSampledBytes: rssPeakSampled,
    // resourceUsage().maxRSS is in kilobytes, and covers the whole life of the process.
    maxRssBytes: process.resourceUsage().maxRSS * 1024
  }) + '\n')
} finally {
  await dropTable(admin, tableName)
}
