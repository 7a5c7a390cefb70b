/**
 * `npm run bench`: middy-idempotency against Powertools for AWS Lambda (TypeScript)
 * idempotency, per SQS record, on one DynamoDB Local started (and stopped) here, and, in the
 * `redis` section, RedisStore against Powertools' cache store on a redis-server started here.
 * See bench/README.md for what is measured and how. Flags: --quick (a few rounds only),
 * --first-batch (throughput and dynamodb-latency time each handler's first batch, not a warm one), --no-memory, --no-bundle, --no-timeout, --no-transact, --no-redis, --no-dynamodb-latency, --only SECTION[,SECTION] (sections:
 * throughput, dynamodb-latency, timeout, transact, memory, bundle, redis; e.g. `--only dynamodb-latency`). Timing is printed, never asserted.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { localClientConfig, startDynamoDBLocal } from '../scripts/dynamodb-local.mjs'
import type { BundleResult } from './lib/bundle.js'
import { bundleSection, COLD_START, medianOf, SDK_FIRST, SHARED_FIRST } from './lib/bundle-section.js'
import { PRICES } from './lib/capacity.js'
import { WORKLOADS, type Workload } from './lib/events.js'
import { measureMemory, type MemoryResult } from './lib/memory.js'
import { fmt, ratio, ratiosTable, requestsTable, rowsTable, summarise, table, type Row } from './lib/report.js'
import { redisReport, redisSection, type RedisResult } from './lib/redis-section.js'
import { redisTargets } from './lib/redis-report.js'
import type { Implementation } from './lib/tables.js'
import { contenders, runRound, type Sample } from './lib/throughput.js'
import { dynamodbLatencyReport, dynamodbLatencySection, latencyAllNewRatio, type LatencyResult } from './lib/dynamodb-latency.js'
import { TIMEOUT_NOTE, timeoutInABatch, timeoutTable, type TimeoutRow } from './lib/timeout-batch.js'
import { TRANSACT_NOTE, transactRatiosTable, transactTable, transactTargets, transactWorkloads, type TransactRow } from './lib/transact-workloads.js'

const argv = process.argv.slice(2)
const args = new Set(argv)
const quick = args.has('--quick')
const SECTIONS = ['throughput', 'dynamodb-latency', 'timeout', 'transact', 'memory', 'bundle', 'redis'] as const
type Section = typeof SECTIONS[number]
// `--only transact` or `--only=transact,timeout`: those sections and no other.
const onlyValue = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? (argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : undefined)
const only = onlyValue?.split(',').map((s) => s.trim()).filter((s) => s !== '')
if (only !== undefined) {
  const unknown = only.filter((s) => !(SECTIONS as readonly string[]).includes(s))
  if (unknown.length > 0 || only.length === 0) throw new Error(`--only takes one or more of ${SECTIONS.join(', ')} (got ${onlyValue ?? 'nothing'})`)
}
const runs = (section: Section): boolean => only === undefined ? !args.has(`--no-${section}`) : only.includes(section)
// Fewer rounds for big batches: a 1,000-record round of every workload is ~16,000 requests.
const ROUNDS: Record<number, number> = quick ? { 10: 3, 100: 2, 1000: 1 } : { 10: 15, 100: 9, 1000: 3 }
const SIZES = [10, 100, 1000]
/** Ours on the AWS SDK and ours on `@aws-lite/client`, each measured against Powertools. */
const OURS: Implementation[] = ['ours', 'ours-lite']
const COLD_IMPORTS = quick ? 5 : 15
const BIG_BATCH = 10_000
/** The old space of the capped memory runs (MB): V8 then collects where it would otherwise grow. */
const HEAP_CAP_MB = 64
const TIMEOUT_ROUNDS = quick ? 1 : 3
// A 1,000-record transact round is about 12 s for ours on DynamoDB Local (transactions are its slowest request).
const TRANSACT_ROUNDS: Record<number, number> = quick ? { 10: 3, 100: 1, 1000: 1 } : { 10: 9, 100: 5, 1000: 2 }
// A Redis round of 100 records is tens of milliseconds: rounds are cheap, and the machine is noisy.
const REDIS_SIZE = 100
const REDIS_ROUNDS = quick ? 5 : 31
const REDIS_WARMUP = quick ? 3 : 10
// What the proxy adds to each write of a client: about one round trip within an AZ.
const REDIS_DELAY_MS = Number(process.env.BENCH_REDIS_DELAY_MS ?? 1)
// Ours' `maxStoreRequests` in the redis section, to see what the default (50) costs in round trips.
// What the proxy adds to each DynamoDB request in the dynamodb-latency section: a request to DynamoDB in the same Region.
const DYNAMODB_DELAY_MS = Number(process.env.BENCH_DYNAMODB_DELAY_MS ?? 5)
// A 1,000-record round through the proxy is about 2 s of DynamoDB Local's time on 2 cores.
const LATENCY_ROUNDS: Record<number, number> = quick ? { 10: 3, 100: 2, 1000: 1 } : { 10: 9, 100: 5, 1000: 2 }
const REDIS_CONCURRENCY = process.env.BENCH_REDIS_CONCURRENCY === undefined ? undefined : Number(process.env.BENCH_REDIS_CONCURRENCY)

// Both implementations prefix their keys with the function name; give them the same one.
process.env.AWS_LAMBDA_FUNCTION_NAME ??= 'bench-consumer'

const out: string[] = []
const say = (text = ''): void => { out.push(text); process.stdout.write(text + '\n') }
const progress = (text: string): void => { process.stderr.write(`… ${text}\n`) }

const machine = (): string => {
  const git = (() => { try { return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() } catch { return 'unknown' } })()
  return `node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown cpu'}), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, commit ${git}`
}

const throughput = async (endpoint: string, warm: boolean): Promise<Row[]> => {
  const admin = new DynamoDBClient(localClientConfig(endpoint))
  const both = await contenders(endpoint)
  try {
    // Warm-up (not recorded): JIT of DynamoDB Local and of both implementations, sockets opened.
    for (const workload of WORKLOADS) for (const contender of both) await runRound(admin, contender, workload, 100)
    const rows: Row[] = []
    for (const size of SIZES) {
      for (const workload of WORKLOADS) {
        const samples = new Map<string, Sample[]>(both.map((c) => [c.implementation, []]))
        for (let round = 0; round < (ROUNDS[size] ?? 1); round++) {
          // Interleaved: ours, ours-lite, theirs, ours ... so drift in load hits all alike.
          for (const contender of both) samples.get(contender.implementation)?.push(await runRound(admin, contender, workload, size, { warm }))
        }
        for (const contender of both) rows.push(summarise(contender.implementation, workload, size, samples.get(contender.implementation) ?? []))
        progress(`${workload} × ${size} done`)
      }
    }
    return rows
  } finally {
    admin.destroy()
    for (const contender of both) contender.destroy()
  }
}

const find = (rows: Row[], implementation: string, workload: Workload, size: number): Row =>
  rows.find((r) => r.implementation === implementation && r.workload === workload && r.size === size) as Row

const targets = (rows: Row[], bundles: BundleResult[], imports: Map<string, number[]>, timeouts: TimeoutRow[], transacts: TransactRow[], redis: RedisResult | undefined, memory: MemoryResult[], latency: LatencyResult | undefined): string => {
  const lines: string[][] = []
  const check = (name: string, measured: number, limit: number, unit: string): void => {
    lines.push([name, `${fmt(measured, 3)}${unit}`, `≤ ${limit}${unit}`, measured <= limit ? 'PASS' : 'MISS'])
  }
  if (rows.length > 0) {
    // Requests per record are absolute figures for ours (not ratios), at every batch size.
    for (const size of SIZES) {
      check(`requests/record, all new, batch ${size} (ours, absolute)`, find(rows, 'ours', 'all new', size).requestsPerRecord, 2.0, '')
      check(`requests/record, redelivered duplicates, batch ${size} (ours, absolute)`, find(rows, 'ours', 'all duplicates', size).requestsPerRecord, 0.1, '')
      check(`requests/record, half and half, batch ${size} (ours, absolute)`, find(rows, 'ours', 'half and half', size).requestsPerRecord, 1.1, '')
    }
    const timeRatio = (workload: Workload): number => ratio(find(rows, 'ours', workload, 100).medianMs, find(rows, 'theirs', workload, 100).medianMs)
    check('median batch time, all new, batch 100 (ours/theirs)', timeRatio('all new'), 1.0, '')
    check('median batch time, redelivered duplicates, batch 100 (ours/theirs)', timeRatio('all duplicates'), 0.3, '')
    check('median batch time, half and half, batch 100 (ours/theirs)', timeRatio('half and half'), 0.8, '')
    // Issue 32: grouped writes, and the client without the SDK.
    const allNew = (impl: Implementation, size: number, pick: (r: Row) => number): number => ratio(pick(find(rows, impl, 'all new', size)), pick(find(rows, 'theirs', 'all new', size)))
    for (const impl of OURS) {
      for (const [size, limit] of [[10, 0.25], [100, 0.1]] as const) check(`requests per new record, batch ${size} (${impl}/theirs)`, allNew(impl, size, (r) => r.requestsPerRecord), limit, '')
      for (const size of [100, 1000]) check(`median batch time, all new, batch ${size} (${impl}/theirs)`, allNew(impl, size, (r) => r.medianMs), 0.6, '')
      check(`node CPU per batch, all new, batch 100 (${impl}/theirs)`, allNew(impl, 100, (r) => r.cpuMs), 0.5, '')
    }
  }
  if (latency !== undefined) {
    check(`median batch time, all new, batch 100, DynamoDB ${DYNAMODB_DELAY_MS} ms away (ours/theirs)`, latencyAllNewRatio(latency), 1.0, '')
    for (const impl of OURS) {
      for (const size of [100, 1000]) check(`median batch time, all new, batch ${size}, DynamoDB ${DYNAMODB_DELAY_MS} ms away (${impl}/theirs)`, latencyAllNewRatio(latency, size, impl), 0.6, '')
    }
  }
  const bundle = (impl: string): BundleResult | undefined => bundles.find((b) => b.implementation === impl)
  if (bundles.length > 0) {
    const bytes = (h: string): number => ratio(bundle(h)?.bytes ?? 0, bundle(h.replace('ours', 'theirs'))?.bytes ?? 1)
    const shared = (h: string): number => ratio(medianOf(imports, `${h} ${SHARED_FIRST}`), medianOf(imports, `${h.replace('ours', 'theirs')} ${SHARED_FIRST}`))
    check('bundle bytes, typical SQS handler, minified (ours/theirs)', bytes('ours'), 0.6, '')
    check('bundle bytes, typical HTTP handler, minified (ours/theirs)', bytes('ours-http'), 0.6, '')
    const both = (subject: string): number => ratio(medianOf(imports, `ours ${subject}`), medianOf(imports, `theirs ${subject}`))
    check(`${COLD_START}, SQS handler (ours/theirs)`, both(COLD_START), 0.7, '')
    check(`cold import ${SDK_FIRST}, SQS handler (ours/theirs)`, both(SDK_FIRST), 0.7, '')
    check('cold import beyond the SDK and @middy/core, SQS handler (ours/theirs)', shared('ours'), 0.7, '')
    check('cold import beyond the SDK and @middy/core, HTTP handler (ours/theirs)', shared('ours-http'), 0.7, '')
    check(`${COLD_START}, SQS handler (ours-lite with @aws-lite/client / theirs with its SDK)`, ratio(medianOf(imports, `ours-lite ${COLD_START}`), medianOf(imports, `theirs ${COLD_START}`)), 0.4, '')
  }
  for (const t of timeouts.filter((x) => x.contender !== 'ours allSettled')) {
    check(`timeout in a batch of 10: finished records re-run (${t.contender}, absolute)`, t.finishedReRun, 0, '')
  }
  for (const m of memory.filter((x) => x.workload === 'new' && x.source !== 'store-only' && x.heapCapMb === undefined)) {
    const bytes = m.measure === 'live' ? m.heapPeakLiveBytes - m.heapBeforeBytes : m.rssPeakSampledBytes - m.rssBeforeBytes
    check(`${m.measure === 'live' ? 'live heap' : 'RSS growth'} per record, ${m.records.toLocaleString('en')}-record ${m.source === 'sqs' ? 'SQS' : 'Kafka'} batch (ours, absolute)`, bytes / m.records / 1024, 3, ' KB')
  }
  lines.push(...transactTargets(transacts))
  if (redis !== undefined) lines.push(...redisTargets(redis.rows, redis.bundles, REDIS_SIZE))
  return table(['target', 'measured', 'wanted', ''], lines)
}

const main = async (): Promise<void> => {
  const started = Date.now()
  say('# middy-idempotency vs Powertools idempotency: SQS per-record benchmark')
  say()
  say(`Machine at start: ${machine()}`)
  say(`Rounds per implementation (interleaved A/B, fresh tables each round, after one warm-up round of each workload at 100): ${SIZES.map((s) => `batch ${s}: ${ROUNDS[s]}`).join(', ')}${quick ? ' (--quick)' : ''}; transact workloads: ${SIZES.map((s) => `batch ${s}: ${TRANSACT_ROUNDS[s]}`).join(', ')}; dynamodb-latency (${DYNAMODB_DELAY_MS} ms): ${SIZES.map((s) => `batch ${s}: ${LATENCY_ROUNDS[s]}`).join(', ')}; redis: batch ${REDIS_SIZE}: ${REDIS_ROUNDS} after ${REDIS_WARMUP} warm-up rounds`)
  if (only !== undefined) say(`Sections run (--only): ${only.join(', ')}`)
  say()

  let rows: Row[] = []
  let memory: MemoryResult[] = []
  let timeouts: TimeoutRow[] = []
  let transacts: TransactRow[] = []
  let redis: RedisResult | undefined
  let latency: LatencyResult | undefined
  // DynamoDB Local only for the sections that use it (`--only redis` needs none).
  const ddb = (['throughput', 'dynamodb-latency', 'timeout', 'transact', 'memory'] as const).some(runs) ? await startDynamoDBLocal() : undefined
  if (ddb !== undefined) {
    try {
      if (runs('throughput')) rows = await throughput(ddb.endpoint, !args.has('--first-batch'))
      if (runs('dynamodb-latency')) latency = await dynamodbLatencySection({ endpoint: ddb.endpoint, delayMs: DYNAMODB_DELAY_MS, sizes: SIZES, rounds: LATENCY_ROUNDS, warm: !args.has('--first-batch'), progress })
      if (runs('timeout')) {
        progress('timeout in a batch')
        timeouts = await timeoutInABatch(ddb.endpoint, TIMEOUT_ROUNDS)
      }
      if (runs('transact')) transacts = await transactWorkloads(ddb.endpoint, SIZES, TRANSACT_ROUNDS, progress)
      if (runs('memory')) {
        progress(`${BIG_BATCH}-record batch in a child process`)
        // Each figure from its own process: forcing collections to see the live heap would hide the garbage RSS counts.
        memory = []
        for (const source of ['sqs', 'kafka', 'store-only'] as const) {
          for (const measure of source === 'store-only' ? ['rss'] as const : ['rss', 'live'] as const) {
            progress(`${BIG_BATCH}-record ${source === 'sqs' ? 'SQS' : source === 'kafka' ? 'Kafka (50 partitions)' : 'SQS, store only'} batch in a child process (${measure === 'rss' ? 'RSS' : 'live heap'})`)
            memory.push(await measureMemory(ddb.endpoint, BIG_BATCH, 'new', 50, source, measure))
          }
        }
        // V8 grows the heap rather than collect while it may: uncapped RSS counts garbage a small
        // function's memory would have had collected. The same batches with the old space capped.
        for (const source of ['sqs', 'kafka', 'store-only'] as const) {
          progress(`${BIG_BATCH}-record ${source} batch in a child process (RSS, old space capped at ${HEAP_CAP_MB} MB)`)
          memory.push(await measureMemory(ddb.endpoint, BIG_BATCH, 'new', 50, source, 'rss', HEAP_CAP_MB))
        }
        // Is the bound honoured by the bulk read of redeliveries too? A small bound makes it visible cheaply.
        progress('1,000 redelivered records with concurrency 4 in a child process')
        memory.push(await measureMemory(ddb.endpoint, 1000, 'duplicates', 4))
        if (args.has('--unbounded')) {
          progress(`${BIG_BATCH}-record batch with an unbounded fan-out (concurrency ${BIG_BATCH})`)
          memory.push(await measureMemory(ddb.endpoint, BIG_BATCH, 'new', BIG_BATCH))
        }
      }
    } finally {
      await ddb.stop()
    }
  }
  if (runs('redis')) {
    redis = await redisSection({
      size: REDIS_SIZE, rounds: REDIS_ROUNDS, warmup: REDIS_WARMUP, coldImports: COLD_IMPORTS, delayMs: REDIS_DELAY_MS, oursConcurrency: REDIS_CONCURRENCY, progress
    })
  }

  if (rows.length > 0) {
    say('## Batches on DynamoDB Local')
    say()
    say(rowsTable(rows))
    say()
    say('ours: the README\'s handler on the AWS SDK; ours-lite: the same on `@aws-lite/client` (its retries, up to 5, are not counted: a call is one request). ' +
      'Both group the writes made together into BatchExecuteStatement requests of up to 25 statements (`groupWrites`, on by default).')
    say()
    say('### Requests per record, side by side')
    say()
    say(requestsTable(rows))
    say()
    say('req/rec counts every request attempt the client sent (the SDK\'s retries included) in the timed batch only, divided by its records. ' +
      'WCU/RCU are capacity units per record: as DynamoDB Local reported them (`ReturnConsumedCapacity: TOTAL` added to every command), ' +
      'except where marked `*`: refused conditional writes come back without ConsumedCapacity, so those were computed by the documented rule ' +
      '(at least 1 WCU per KB of the larger of the item sent and the item stored), and so were the statements of a BatchExecuteStatement, ' +
      'which DynamoDB Local answers without it (each billed as its single-item write, at least 1 WCU per KB). Reads are strongly consistent: 1 RCU = 1 RRU per 4 KB item. ' +
      'failed/batch: records reported in batchItemFailures (SQS retries them). ran/batch: calls of the business function.')
    say()
    say(`On-demand prices used: $${PRICES.writeRequestUnit} per million write request units, $${PRICES.readRequestUnit} per million read request units — ${PRICES.source}.`)
    say()
    say('### Ratios ours / theirs (below 1: ours is lower)')
    say()
    say(ratiosTable(rows))
    say()
  }

  if (latency !== undefined) for (const line of dynamodbLatencyReport(latency)) say(line)

  if (timeouts.length > 0) {
    say('## Timeout in a batch')
    say()
    say(timeoutTable(timeouts))
    say()
    say(TIMEOUT_NOTE)
    say()
  }

  if (transacts.length > 0) {
    say('## transact: effects that are DynamoDB writes')
    say()
    say(transactTable(transacts))
    say()
    say(transactRatiosTable(transacts))
    say()
    say(TRANSACT_NOTE)
    say()
  }

  if (memory.length > 0) {
    say(`## Big batches through ours, each alone in a child process`)
    say()
    const mb = (bytes: number): string => `${fmt(bytes / 1024 / 1024, 1)} MB`
    const kb = (bytes: number): string => `${fmt(bytes / 1024, 1)} KB`
    const columns = ['records', 'source', 'workload', 'maxStoreRequests option', 'measured', 'batch ms', 'requests',
      'max requests in flight', 'RSS before', 'peak RSS (sampled)', 'per record', 'failed']
    say(table(columns,
      memory.map((m) => [m.records.toLocaleString('en'), m.source, m.workload, String(m.concurrency), m.measure === 'live' ? 'live heap' : m.heapCapMb === undefined ? 'RSS' : `RSS, old space ≤ ${m.heapCapMb} MB`, fmt(m.ms, 0), String(m.requests), String(m.maxInFlight),
        mb(m.rssBeforeBytes), mb(m.rssPeakSampledBytes),
        kb(m.measure === 'live' ? (m.heapPeakLiveBytes - m.heapBeforeBytes) / m.records : (m.rssPeakSampledBytes - m.rssBeforeBytes) / m.records), String(m.failed)])))
    say()
    say('Per record, live heap: the heap after a full collection (sampled every 100 ms while the batch runs, and once with its answer), ' +
      'at its highest, less the same before the batch, per record: what the engine, the store client and the answer keep reachable. ' +
      'Per record, RSS: the growth of the peak RSS over the RSS before the batch, in a process whose collector was left alone; it also counts garbage not yet collected, most of it the AWS SDK\'s request and response objects, and memory V8 keeps ' +
      'after collecting, in a process with memory to spare. The `store-only` row sends the same claims and completions ' +
      'straight to a DynamoDBStore, with no middleware and no handler: the RSS the SDK\'s own garbage takes, for comparison. ' +
      `The rows with the old space capped at ${HEAP_CAP_MB} MB (\`--max-old-space-size\`) run the same batches where V8 must collect rather than grow: ` +
      'the batch completes, and what its RSS still grows is bounded by the cap, not by the records.')
    say('Max in flight is counted at the SDK, per attempt. Claims, completions and the bulk reads of redeliveries (one BatchGetItem ' +
      'per 100 keys) all stay within the `maxStoreRequests` option (default 50, the SDK\'s socket pool). ' +
      'For comparison, Powertools\' BatchProcessor starts every record at once: see its max in flight at batch 1,000 above ' +
      '(the SDK\'s socket pool of 50 queues the rest). Run with --unbounded to add a 10,000-record batch with concurrency 10,000.')
    say()
  }

  let bundles: BundleResult[] = []
  let imports = new Map<string, number[]>()
  if (runs('bundle')) {
    progress('bundling and cold imports')
    ;({ bundles, imports } = await bundleSection(COLD_IMPORTS, say))
  }

  if (redis !== undefined) for (const line of redisReport(redis)) say(line)

  say('## Targets')
  say()
  say(targets(rows, bundles, imports, timeouts, transacts, redis, memory, latency))
  say()
  say(`Machine at end: ${machine()}. Total ${fmt((Date.now() - started) / 1000, 0)} s.`)

  const results = fileURLToPath(new URL('./results/', import.meta.url))
  mkdirSync(results, { recursive: true })
  writeFileSync(`${results}latest.md`, out.join('\n') + '\n')
  progress(`written to ${results}latest.md`)
}

await main()
