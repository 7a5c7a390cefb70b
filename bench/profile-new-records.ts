/**
 * Where the CPU of a new record goes: the README's handler (`handlers/ours.ts`, `perRecord` +
 * `DynamoDBStore`) takes batches of all-new SQS records on DynamoDB Local, and V8's own profiles
 * (lib/profile.ts) say, per record, which functions of `src/` spend the time, how often each runs
 * and what they allocate. `npx tsx bench/profile-new-records.ts [--batches 200] [--size 100]`.
 * Three passes over fresh records, after a warm-up: the CPU profile (nothing else on), then call
 * counts (precise coverage, which slows the code it counts), then sampled allocations.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { Context, SQSEvent } from 'aws-lambda'
import { writeFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { localClientConfig, startDynamoDBLocal } from '../scripts/dynamodb-local.mjs'
import type { DynamoDBAwsLiteClient } from '../src/dynamodb.js'
import { createTableFor, type Implementation } from './lib/tables.js'
import { lambdaContext, roundOf } from './lib/events.js'
import { Profiling, type Row } from './lib/profile.js'

const { values } = parseArgs({
  options: {
    batches: { type: 'string', default: '200' },
    size: { type: 'string', default: '100' },
    warm: { type: 'string', default: '20' },
    'count-batches': { type: 'string', default: '20' },
    top: { type: 'string', default: '25' },
    /** `theirs`: Powertools' handler (handlers/theirs.ts) through the same passes, to compare the areas; `ours-lite`: ours on `@aws-lite/client`. */
    impl: { type: 'string', default: 'ours' },
    /** Writes every row of the three passes there, as JSON. */
    json: { type: 'string' }
  }
})
const batches = Number(values.batches)
const size = Number(values.size)
const top = Number(values.top)
const countBatches = Math.min(batches, Number(values['count-batches']))

const area = (row: Row): string => {
  if (row.file.startsWith('src/')) return 'ours (src/)'
  if (/node_modules\/@(aws-sdk|smithy|aws-crypto)\//.test(row.file)) return 'AWS SDK'
  if (/node_modules\/(@aws-lite|aws4)\//.test(row.file)) return '@aws-lite/client'
  if (row.file.includes('node_modules/@middy/')) return 'Middy'
  if (row.file.startsWith('bench/')) return 'bench (events, work)'
  if (row.file === '') return /^\((garbage collector|idle|program)\)$/.test(row.name) ? row.name : 'native (I/O, microtasks, hashing, JSON)'
  return 'Node.js and other'
}

const fixed = (n: number, digits = 2): string => n.toFixed(digits)
const table = (head: string[], rows: string[][]): string =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')

// Date.now() as called by our code only (the SDK reads the clock too, to sign and to retry),
// counted in the call-count pass. Wrapped before the handlers load: the middleware's `now`
// option defaults to the Date.now it finds then.
const realNow = Date.now
let counting = false
let nows = 0
Date.now = () => {
  if (counting && (new Error().stack?.split('\n')[2] ?? '').includes('/src/')) nows++
  return realNow()
}
const { createOursHandler } = await import('./handlers/ours.js')
const { createTheirsHandler } = await import('./handlers/theirs.js')
const { createOursLiteHandler } = await import('./handlers/ours-lite-create.js')
type Invoke = (event: SQSEvent, context: Context) => Promise<{ batchItemFailures: unknown[] }>

/** The handler profiled, on its own client pointed at DynamoDB Local. */
const handlerOf = async (impl: Implementation, tableName: string, endpoint: string): Promise<Invoke> => {
  if (impl === 'ours-lite') {
    const { default: awsLite } = await import('@aws-lite/client')
    const client = await awsLite({ region: 'us-east-1', accessKeyId: 'local', secretAccessKey: 'local', endpoint }) as unknown as DynamoDBAwsLiteClient
    return createOursLiteHandler({ tableName, client }) as unknown as Invoke
  }
  const client = new DynamoDBClient(localClientConfig(endpoint))
  return (impl === 'ours' ? createOursHandler : createTheirsHandler)({ tableName, client }) as unknown as Invoke
}

const main = async (): Promise<void> => {
  const ddb = await startDynamoDBLocal()
  const profiling = new Profiling(process.cwd())
  try {
    const admin = new DynamoDBClient(localClientConfig(ddb.endpoint))
    const impl: Implementation = values.impl === 'theirs' || values.impl === 'ours-lite' ? values.impl : 'ours'
    const tableName = await createTableFor(admin, impl)
    const invoke = await handlerOf(impl, tableName, ddb.endpoint)
    const context = lambdaContext('profile')
    // Records are made before the pass they feed, so that making them is in no profile.
    const events = (count: number): SQSEvent[] => Array.from({ length: count }, () => roundOf('all new', size).timed)
    const run = (list: SQSEvent[]) => async (): Promise<void> => {
      for (const event of list) {
        const { batchItemFailures } = await invoke(event, context)
        if (batchItemFailures.length > 0) throw new Error(`${batchItemFailures.length} records failed`)
      }
    }
    await run(events(Number(values.warm)))()
    await profiling.start()

    const records = batches * size
    const timed = events(batches)
    const cpuBefore = process.cpuUsage()
    const start = performance.now()
    const cpuRows = await profiling.cpu(run(timed))
    const wallMs = performance.now() - start
    const cpu = process.cpuUsage(cpuBefore)
    const sampledUs = cpuRows.filter((r) => r.name !== '(idle)').reduce((a, r) => a + r.value, 0)

    const counted = events(countBatches)
    counting = true
    let callRows: Row[]
    try {
      callRows = await profiling.calls(run(counted))
    } finally {
      counting = false
    }
    const allocRows = await profiling.allocations(run(events(countBatches)))

    const perRecord = (us: number): string => fixed(us / records)
    const byArea = new Map<string, number>()
    for (const row of cpuRows) byArea.set(area(row), (byArea.get(area(row)) ?? 0) + row.value)
    const ours = cpuRows.filter((r) => r.file.startsWith('src/'))
    const counts = callRows.filter((r) => r.file.startsWith('src/'))
    const allocTotal = allocRows.reduce((a, r) => a + r.value, 0)
    const allocOurs = allocRows.filter((r) => r.file.startsWith('src/'))
    const countedRecords = countBatches * size

    const out = [
      `${impl}: node ${process.version}, ${batches} batches of ${size} new records (${records} records), after ${values.warm} warm-up batches`,
      `wall ${fixed(wallMs / batches, 1)} ms per batch; node CPU ${perRecord(cpu.user + cpu.system)} µs per record (process.cpuUsage), sampled ${perRecord(sampledUs)} µs`,
      '',
      '### Self time by area, µs per record',
      table(['area', 'µs/record'], [...byArea].sort((a, b) => b[1] - a[1]).map(([name, us]) => [name, perRecord(us)])),
      '',
      `### All functions by self time (top ${top}), µs per record`,
      table(['function', 'where', 'µs/record'], cpuRows.filter((r) => r.name !== '(idle)').slice(0, top).map((r) => [r.name, r.file === '' ? '' : `${r.file}:${r.line}`, perRecord(r.value)])),
      '',
      `### Our functions by self time (top ${top}), µs per record; all of src/: ${perRecord(ours.reduce((a, r) => a + r.value, 0))}`,
      table(['function', 'where', 'µs/record'], ours.slice(0, top).map((r) => [r.name, `${r.file}:${r.line}`, perRecord(r.value)])),
      '',
      `### Calls per record of our functions (top ${top} of ${counts.length} that ran; ${countBatches} batches), and Date.now() from src/ ${fixed(nows / countedRecords)} per record (an async function counts once per resumption)`,
      table(['function', 'where', 'calls/record'], counts.slice(0, top).map((r) => [r.name, `${r.file}:${r.line}`, fixed(r.value / countedRecords)])),
      '',
      `### Allocations (sampled), bytes per record: all ${Math.round(allocTotal / countedRecords)}, src/ ${Math.round(allocOurs.reduce((a, r) => a + r.value, 0) / countedRecords)}`,
      table(['function', 'where', 'bytes/record'], allocOurs.slice(0, top).map((r) => [r.name, `${r.file}:${r.line}`, String(Math.round(r.value / countedRecords))]))
    ]
    console.log(out.join('\n'))
    if (values.json !== undefined) await writeFile(values.json, JSON.stringify({ impl, records, countedRecords, cpu: cpuRows, calls: callRows, allocations: allocRows }))
    admin.destroy()
  } finally {
    profiling.disconnect()
    await ddb.stop()
  }
}

await main()
