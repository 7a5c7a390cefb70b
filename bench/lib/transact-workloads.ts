/**
 * The `transact` workloads (issue 7 item 4, issue 10 item 2): new records whose effect is one
 * DynamoDB write, at several batch sizes, through ours (claim + `transact` commit), the
 * hand-written seed pattern and Powertools with a separate write. Requests and capacity are
 * counted by `instrument.ts` on each contender's client (the document clients share its
 * middleware stack); DynamoDB Local reports a transaction's capacity as DynamoDB bills it,
 * 2 write units per KB per item (probed: a transaction of a small item and a 1.5 KB item
 * reported 2 + 4), so transactional writes count double without any rule applied here.
 */
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { performance } from 'node:perf_hooks'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { createTransactConsumer, TRANSACT_CONTENDERS, type TransactContender } from '../handlers/transact-consumers.js'
import { workCounter } from '../handlers/work.js'
import { lambdaContext, roundOf } from './events.js'
import { instrument, resetMeter, totalAttempts, type Meter } from './instrument.js'
import { fmt, ratio, table } from './report.js'
import { mean, median } from './stats.js'
import { createTableFor, dropTable } from './tables.js'

interface TransactSample { ms: number, cpuMs: number, records: number, attempts: Record<string, number>, writeUnits: number, readUnits: number, failed: number, runs: number }

export interface TransactRow {
  contender: TransactContender
  size: number
  rounds: number
  medianMs: number
  msPerRecord: number
  cpuMs: number
  requestsPerRecord: number
  breakdown: string
  writeUnitsPerRecord: number
  readUnitsPerRecord: number
  failedPerBatch: number
  runsPerBatch: number
}

let orderTables = 0

const createOrdersTable = async (admin: DynamoDBClient): Promise<string> => {
  const tableName = `bench-orders-${process.pid}-${++orderTables}`
  await admin.send(new CreateTableCommand({
    TableName: tableName,
    KeySchema: [{ AttributeName: 'orderId', KeyType: 'HASH' }],
    AttributeDefinitions: [{ AttributeName: 'orderId', AttributeType: 'S' }],
    BillingMode: 'PAY_PER_REQUEST'
  }))
  return tableName
}

/** One timed batch of `size` new records for one contender, on fresh tables of its own. */
const runRound = async (admin: DynamoDBClient, client: DynamoDBClient, meter: Meter, contender: TransactContender, size: number): Promise<TransactSample> => {
  // The seed pattern's markers live in a table of our schema (partition key idempotencyKey, TTL expiry).
  const idempotencyTable = await createTableFor(admin, contender === 'theirs' ? 'theirs' : 'ours')
  const ordersTable = await createOrdersTable(admin)
  try {
    const invoke = createTransactConsumer(contender, { client, idempotencyTable, ordersTable })
    const event = roundOf('all new', size).timed
    resetMeter(meter)
    const runsBefore = workCounter.runs
    const cpuBefore = process.cpuUsage()
    const start = performance.now()
    const answer = await invoke(event, lambdaContext(process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench'))
    const ms = performance.now() - start
    const cpu = process.cpuUsage(cpuBefore)
    return {
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      records: size,
      attempts: { ...meter.attempts },
      writeUnits: meter.reported.write + meter.computed.write,
      readUnits: meter.reported.read + meter.computed.read,
      failed: ((answer as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures ?? []).length,
      runs: workCounter.runs - runsBefore
    }
  } finally {
    await dropTable(admin, idempotencyTable)
    await admin.send(new DeleteTableCommand({ TableName: ordersTable }))
  }
}

const short = (operation: string): string => operation.replace(/Item(s)?$/, '')

const summarise = (contender: TransactContender, size: number, samples: TransactSample[]): TransactRow => {
  const perRecord = (pick: (s: TransactSample) => number): number => mean(samples.map(pick)) / size
  const operations = [...new Set(samples.flatMap((s) => Object.keys(s.attempts)))].sort()
  return {
    contender,
    size,
    rounds: samples.length,
    medianMs: median(samples.map((s) => s.ms)),
    msPerRecord: median(samples.map((s) => s.ms)) / size,
    cpuMs: median(samples.map((s) => s.cpuMs)),
    requestsPerRecord: perRecord((s) => totalAttempts({ attempts: s.attempts } as Meter)),
    breakdown: operations.map((op) => `${short(op)} ${fmt(perRecord((s) => s.attempts[op] ?? 0), 3)}`).join(' + '),
    writeUnitsPerRecord: perRecord((s) => s.writeUnits),
    readUnitsPerRecord: perRecord((s) => s.readUnits),
    failedPerBatch: mean(samples.map((s) => s.failed)),
    runsPerBatch: mean(samples.map((s) => s.runs))
  }
}

/** Every contender at every size, `rounds[size]` times each, interleaved, after one warm-up round at 100. */
export const transactWorkloads = async (endpoint: string, sizes: number[], rounds: Record<number, number>, progress: (text: string) => void): Promise<TransactRow[]> => {
  const admin = new DynamoDBClient(localClientConfig(endpoint))
  const contenders = TRANSACT_CONTENDERS.map((contender) => {
    const client = new DynamoDBClient(localClientConfig(endpoint))
    return { contender, client, meter: instrument(client) }
  })
  try {
    for (const c of contenders) await runRound(admin, c.client, c.meter, c.contender, 100)
    const rows: TransactRow[] = []
    for (const size of sizes) {
      const samples = new Map<TransactContender, TransactSample[]>(TRANSACT_CONTENDERS.map((c) => [c, []]))
      for (let round = 0; round < (rounds[size] ?? 1); round++) {
        for (const c of contenders) samples.get(c.contender)?.push(await runRound(admin, c.client, c.meter, c.contender, size))
      }
      for (const c of contenders) rows.push(summarise(c.contender, size, samples.get(c.contender) ?? []))
      progress(`transact × ${size} done`)
    }
    return rows
  } finally {
    admin.destroy()
    for (const c of contenders) c.client.destroy()
  }
}

export const transactTable = (rows: TransactRow[]): string => table(
  ['impl', 'batch', 'rounds', 'median ms', 'ms/record', 'node CPU ms', 'req/rec', 'requests per record', 'WCU/rec', 'RCU/rec', 'failed/batch', 'ran/batch'],
  [
    ...rows.map((r) => [r.contender, String(r.size), String(r.rounds), fmt(r.medianMs, 1), fmt(r.msPerRecord, 3), fmt(r.cpuMs, 1), fmt(r.requestsPerRecord, 3), r.breakdown,
      fmt(r.writeUnitsPerRecord, 3), fmt(r.readUnitsPerRecord, 3), fmt(r.failedPerBatch, 1), fmt(r.runsPerBatch, 1)]),
    // Issue 10 item 1 (no claim: the record's own put joins its TransactWriteItems) is not in src/ yet.
    ['ours one-request mode (placeholder: not implemented yet, issue 10 item 1)', '—', '—', '—', '—', '—', '—', '—', '—', '—', '—', '—']
  ]
)

/** Ours against Powertools and against the seed pattern, at each size: requests, write units, time. */
export const transactRatiosTable = (rows: TransactRow[]): string => {
  const find = (contender: TransactContender, size: number): TransactRow | undefined => rows.find((r) => r.contender === contender && r.size === size)
  const lines: string[][] = []
  for (const size of [...new Set(rows.map((r) => r.size))]) {
    const ours = find('ours transact', size)
    if (ours === undefined) continue
    for (const against of ['theirs', 'seed pattern'] as const) {
      const other = find(against, size)
      if (other === undefined) continue
      lines.push([`ours transact / ${against}`, String(size), fmt(ratio(ours.requestsPerRecord, other.requestsPerRecord), 3),
        fmt(ratio(ours.writeUnitsPerRecord, other.writeUnitsPerRecord), 3), fmt(ratio(ours.medianMs, other.medianMs)), fmt(ratio(ours.cpuMs, other.cpuMs))])
    }
  }
  return table(['ratio', 'batch', 'requests', 'write units', 'median time', 'node CPU'], lines)
}

export const TRANSACT_NOTE = 'All new records; each record\'s effect is one put of its order (about 200 bytes) into an orders table. ' +
  '"ours transact": `perRecord` + `transact` (PutItem claim, then one TransactWriteItems of the order and the fenced completion). ' +
  '"seed pattern": no library, one TransactWriteItems of the order and an idempotency marker put with `attribute_not_exists`. ' +
  '"theirs": Powertools `makeIdempotent` around a function that puts the order with its own PutItem (claim, effect, completion). ' +
  'WCU/rec as DynamoDB Local reported them: an item written in a transaction costs 2 write units per KB (prepare and commit), ' +
  'as AWS bills it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling).'
