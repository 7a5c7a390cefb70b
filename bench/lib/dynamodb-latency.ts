/**
 * The `dynamodb-latency` section of `npm run bench`: the SQS batches of the throughput section,
 * ours (`perRecord` + `DynamoDBStore`, on the SDK and on `@aws-lite/client`) against Powertools
 * (`makeIdempotent` + `BatchProcessor`), with DynamoDB Local behind the delay proxy so that every
 * request waits about 5 ms, as a request to DynamoDB from a Lambda function in the same Region
 * roughly does. On loopback DynamoDB Local answers in about a millisecond, and its own CPU on a
 * small machine hides how many requests each client waits for in a row.
 *
 * Each with its defaults: Powertools' `processPartialResponse` starts every record at once
 * (`processInParallel: true`) and the SDK's socket pool (50 per client) bounds its requests in
 * flight; ours groups the writes made together into BatchExecuteStatement requests of up to 25
 * statements. The table prints the requests each kept in flight.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb'
import { performance } from 'node:perf_hooks'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import type { Workload } from './events.js'
import { startDelayProxy } from './delay-proxy.js'
import { fmt, ratio, ratiosTable, rowsTable, summarise, table, type Row } from './report.js'
import { median } from './stats.js'
import { contenders, runRound, type Sample } from './throughput.js'

export interface LatencyOptions {
  /** Each handler takes a batch of one record (untimed) before the timed one, as a warm function has. */
  warm: boolean
  /** DynamoDB Local's endpoint, straight (tables are created and dropped there, undelayed). */
  endpoint: string
  delayMs: number
  sizes: number[]
  rounds: Record<number, number>
  progress: (text: string) => void
}

export interface LatencyResult { rows: Row[], directMs: number, proxiedMs: number, options: LatencyOptions }

export const LATENCY_WORKLOADS: Workload[] = ['all new', 'all duplicates', 'half and half']

/** Median ms of sequential ListTables through `client`: one request's round trip, SDK included. */
const requestMs = async (client: DynamoDBClient, count = 30): Promise<number> => {
  const times: number[] = []
  for (let i = -5; i < count; i++) {
    const start = performance.now()
    await client.send(new ListTablesCommand({ Limit: 1 }))
    if (i >= 0) times.push(performance.now() - start)
  }
  return median(times)
}

export const dynamodbLatencySection = async (options: LatencyOptions): Promise<LatencyResult> => {
  const { endpoint, delayMs, sizes, rounds, progress } = options
  const port = Number(new URL(endpoint).port)
  // Three clients of up to 50 sockets each, and the probe's.
  const proxy = await startDelayProxy(port, delayMs, 192)
  const admin = new DynamoDBClient(localClientConfig(endpoint))
  const proxied = `http://127.0.0.1:${proxy.port}`
  const probe = new DynamoDBClient(localClientConfig(proxied))
  const both = await contenders(proxied)
  try {
    const directMs = await requestMs(admin)
    const proxiedMs = await requestMs(probe)
    progress(`dynamodb-latency: one request ${fmt(directMs, 2)} ms direct, ${fmt(proxiedMs, 2)} ms through the proxy`)
    // Warm-up (not recorded): JIT, and each client's socket pool opened through the proxy.
    for (const workload of LATENCY_WORKLOADS) for (const contender of both) await runRound(admin, contender, workload, 100, { warm: options.warm })
    const rows: Row[] = []
    for (const size of sizes) {
      for (const workload of LATENCY_WORKLOADS) {
        const samples = new Map<string, Sample[]>(both.map((c) => [c.implementation, []]))
        for (let round = 0; round < (rounds[size] ?? 1); round++) {
          // Interleaved A/B, and the order swapped every other round.
          const order = round % 2 === 0 ? both : [...both].reverse()
          for (const contender of order) samples.get(contender.implementation)?.push(await runRound(admin, contender, workload, size, { warm: options.warm }))
        }
        for (const contender of both) rows.push(summarise(contender.implementation, workload, size, samples.get(contender.implementation) ?? []))
        progress(`dynamodb-latency: ${workload} × ${size} done`)
      }
    }
    return { rows, directMs, proxiedMs, options }
  } finally {
    admin.destroy()
    probe.destroy()
    for (const contender of both) contender.destroy()
    await proxy.stop()
  }
}

/** The section's lines for the report. */
export const dynamodbLatencyReport = (result: LatencyResult): string[] => {
  const { rows, directMs, proxiedMs, options } = result
  const time = (impl: string, workload: Workload, size: number): number =>
    rows.find((r) => r.implementation === impl && r.workload === workload && r.size === size)?.medianMs ?? Number.NaN
  return [
    `## Batches on DynamoDB Local ${options.delayMs} ms away, ${options.warm ? 'warm handlers' : 'each handler\'s first batch'}`,
    '',
    `DynamoDB Local behind a loopback proxy that holds each request ${options.delayMs} ms (\`BENCH_DYNAMODB_DELAY_MS\`): one request took ` +
    `${fmt(directMs, 2)} ms straight and ${fmt(proxiedMs, 2)} ms through the proxy (median of 30 ListTables, SDK included). ` +
    'All with their defaults: Powertools\' `processPartialResponse` starts every record at once (`processInParallel: true`: its max in flight, ' +
    'counted where the SDK starts a request, is the batch) and the SDK\'s socket pool (50) queues what is beyond 50 on the wire; ours (the SDK, ' +
    'and `@aws-lite/client`, whose agent has no socket limit) sends the writes made together as BatchExecuteStatement requests of up to 25 (grouped writes). ' +
    (options.warm
      ? 'Warm handlers: each handler takes an untimed batch of one new record before the timed batch, as a warm function has, so ours\' table check (one DescribeTimeToLive, before a store\'s first claim) is behind it. '
      : 'First batch: the timed batch is each handler\'s first, as after a cold start; ours\' table check (one DescribeTimeToLive, before a store\'s first claim) is in it. ') +
    'Rounds interleaved, order swapped each round, fresh tables; ' +
    `rounds per batch size: ${options.sizes.map((s) => `${s}: ${options.rounds[s] ?? 1}`).join(', ')}.`,
    '',
    rowsTable(rows),
    '',
    '### Ratios ours / theirs, measured in this run (below 1: ours is lower)',
    '',
    ratiosTable(rows),
    '',
    table(['batch', ...LATENCY_WORKLOADS.map((w) => `${w}: median ms ours / ours-lite / theirs (ratios to theirs)`)], options.sizes.map((size) => [String(size),
      ...LATENCY_WORKLOADS.map((w) => {
        const [ours, lite, theirs] = [time('ours', w, size), time('ours-lite', w, size), time('theirs', w, size)]
        return `${fmt(ours, 1)} / ${fmt(lite, 1)} / ${fmt(theirs, 1)} (${fmt(ratio(ours, theirs))}, ${fmt(ratio(lite, theirs))})`
      })])),
    ''
  ]
}

/** The target line: all-new batch time at `size` records, `impl` (ours unless given) / theirs, at this latency. */
export const latencyAllNewRatio = (result: LatencyResult, size = 100, impl = 'ours'): number => {
  const time = (name: string): number => result.rows.find((r) => r.implementation === name && r.workload === 'all new' && r.size === size)?.medianMs ?? Number.NaN
  return ratio(time(impl), time('theirs'))
}
