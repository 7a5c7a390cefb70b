/**
 * The `transact` workloads (issue 7 item 4, issue 10 item 2): records whose effect is one
 * DynamoDB write, at several batch sizes, through ours (claim + `transact` commit), ours in
 * one-request mode (`effects: 'transact-only'`: no claim, the commit claims), the hand-written
 * seed pattern and Powertools with a separate write. Two workloads: all new records, and the
 * same records redelivered (ApproximateReceiveCount 2, the originals processed first, untimed).
 * Requests and capacity are counted by `instrument.ts` on each contender's client (the document
 * clients share its middleware stack); DynamoDB Local reports a transaction's capacity as
 * DynamoDB bills it, 2 write units per KB per item (probed: a transaction of a small item and
 * a 1.5 KB item reported 2 + 4), so transactional writes count double without any rule applied here.
 */
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { performance } from 'node:perf_hooks'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { createTransactConsumer, TRANSACT_CONTENDERS, type TransactContender } from '../handlers/transact-consumers.js'
import { workCounter } from '../handlers/work.js'
import { lambdaContext, roundOf, type Workload } from './events.js'
import { instrument, resetMeter, totalAttempts, type Meter } from './instrument.js'
import { fmt, ratio, table } from './report.js'
import { mean, median } from './stats.js'
import { createTableFor, dropTable } from './tables.js'

interface TransactSample { ms: number, cpuMs: number, records: number, attempts: Record<string, number>, writeUnits: number, readUnits: number, unreportedWrites: number, computedWriteUnits: number, failed: number, runs: number }

/** New records, or the same records redelivered. */
export type TransactWorkload = 'all new' | 'redelivered duplicates'
const EVENTS: Record<TransactWorkload, Workload> = { 'all new': 'all new', 'redelivered duplicates': 'all duplicates' }
/** Who runs each workload. Redeliveries: `ours transact` reads them in bulk exactly as the one-request mode does, so it is left out. */
const CONTENDERS_OF: Record<TransactWorkload, TransactContender[]> = {
  'all new': TRANSACT_CONTENDERS,
  'redelivered duplicates': TRANSACT_CONTENDERS.filter((c) => c !== 'ours transact')
}
export const TRANSACT_WORKLOADS: TransactWorkload[] = ['all new', 'redelivered duplicates']

export interface TransactRow {
  contender: TransactContender
  workload: TransactWorkload
  size: number
  rounds: number
  medianMs: number
  msPerRecord: number
  cpuMs: number
  requestsPerRecord: number
  breakdown: string
  writeUnitsPerRecord: number
  readUnitsPerRecord: number
  /** Cancelled transactions per record, whose write units nobody reports (not counted in writeUnitsPerRecord). */
  unreportedWritesPerRecord: number
  /** True when part of the write units was computed by rule (a refused conditional write), not reported. */
  computed: boolean
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

/** One timed batch of `size` records of a workload for one contender, on fresh tables of its own (the originals of redeliveries first, untimed). */
const runRound = async (admin: DynamoDBClient, client: DynamoDBClient, meter: Meter, contender: TransactContender, workload: TransactWorkload, size: number): Promise<TransactSample> => {
  // The seed pattern's markers live in a table of our schema (partition key idempotencyKey, TTL expiry).
  const idempotencyTable = await createTableFor(admin, contender === 'theirs' ? 'theirs' : 'ours')
  const ordersTable = await createOrdersTable(admin)
  try {
    const invoke = createTransactConsumer(contender, { client, idempotencyTable, ordersTable })
    const { setup, timed: event } = roundOf(EVENTS[workload], size)
    if (setup !== undefined) await invoke(setup, lambdaContext(process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench'))
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
      unreportedWrites: Object.values(meter.unreportedOps).reduce((a, b) => a + b, 0),
      computedWriteUnits: meter.computed.write,
      failed: ((answer as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures ?? []).length,
      runs: workCounter.runs - runsBefore
    }
  } finally {
    await dropTable(admin, idempotencyTable)
    await admin.send(new DeleteTableCommand({ TableName: ordersTable }))
  }
}

const short = (operation: string): string => operation.replace(/Item(s)?$/, '')

const summarise = (contender: TransactContender, workload: TransactWorkload, size: number, samples: TransactSample[]): TransactRow => {
  const perRecord = (pick: (s: TransactSample) => number): number => mean(samples.map(pick)) / size
  const operations = [...new Set(samples.flatMap((s) => Object.keys(s.attempts)))].sort()
  return {
    contender,
    workload,
    size,
    rounds: samples.length,
    medianMs: median(samples.map((s) => s.ms)),
    msPerRecord: median(samples.map((s) => s.ms)) / size,
    cpuMs: median(samples.map((s) => s.cpuMs)),
    requestsPerRecord: perRecord((s) => totalAttempts({ attempts: s.attempts } as Meter)),
    breakdown: operations.map((op) => `${short(op)} ${fmt(perRecord((s) => s.attempts[op] ?? 0), 3)}`).join(' + '),
    writeUnitsPerRecord: perRecord((s) => s.writeUnits),
    readUnitsPerRecord: perRecord((s) => s.readUnits),
    unreportedWritesPerRecord: perRecord((s) => s.unreportedWrites),
    computed: samples.some((s) => s.computedWriteUnits > 0),
    failedPerBatch: mean(samples.map((s) => s.failed)),
    runsPerBatch: mean(samples.map((s) => s.runs))
  }
}

/** Every workload and contender at every size, `rounds[size]` times each, interleaved, after one warm-up round of each at 100. */
export const transactWorkloads = async (endpoint: string, sizes: number[], rounds: Record<number, number>, progress: (text: string) => void): Promise<TransactRow[]> => {
  const admin = new DynamoDBClient(localClientConfig(endpoint))
  const contenders = TRANSACT_CONTENDERS.map((contender) => {
    const client = new DynamoDBClient(localClientConfig(endpoint))
    return { contender, client, meter: instrument(client) }
  })
  try {
    for (const workload of TRANSACT_WORKLOADS) {
      for (const c of contenders.filter((x) => CONTENDERS_OF[workload].includes(x.contender))) await runRound(admin, c.client, c.meter, c.contender, workload, 100)
    }
    const rows: TransactRow[] = []
    for (const size of sizes) {
      for (const workload of TRANSACT_WORKLOADS) {
        const running = contenders.filter((x) => CONTENDERS_OF[workload].includes(x.contender))
        const samples = new Map<TransactContender, TransactSample[]>(running.map((c) => [c.contender, []]))
        for (let round = 0; round < (rounds[size] ?? 1); round++) {
          for (const c of running) samples.get(c.contender)?.push(await runRound(admin, c.client, c.meter, c.contender, workload, size))
        }
        for (const c of running) rows.push(summarise(c.contender, workload, size, samples.get(c.contender) ?? []))
        progress(`transact ${workload} × ${size} done`)
      }
    }
    return rows
  } finally {
    admin.destroy()
    for (const c of contenders) c.client.destroy()
  }
}

/** Write units per record, marked * where computed by rule, and † where cancelled transactions (not reported, not counted) were among the writes. */
const writeUnits = (r: TransactRow): string => {
  const units = `${fmt(r.writeUnitsPerRecord, 3)}${r.computed ? '*' : ''}`
  return r.unreportedWritesPerRecord > 0 ? `${units} + ${fmt(r.unreportedWritesPerRecord, 3)} cancelled †` : units
}

export const transactTable = (rows: TransactRow[]): string => table(
  ['impl', 'workload', 'batch', 'rounds', 'median ms', 'ms/record', 'node CPU ms', 'req/rec', 'requests per record', 'WCU/rec', 'RCU/rec', 'failed/batch', 'ran/batch'],
  rows.map((r) => [r.contender, r.workload, String(r.size), String(r.rounds), fmt(r.medianMs, 1), fmt(r.msPerRecord, 3), fmt(r.cpuMs, 1), fmt(r.requestsPerRecord, 3), r.breakdown,
    writeUnits(r), fmt(r.readUnitsPerRecord, 3), fmt(r.failedPerBatch, 1), fmt(r.runsPerBatch, 1)])
)

const findRow = (rows: TransactRow[], contender: TransactContender, workload: TransactWorkload, size: number): TransactRow | undefined =>
  rows.find((r) => r.contender === contender && r.workload === workload && r.size === size)

/** Ours (both modes) against Powertools and against the seed pattern, at each size: requests, write units, time. */
export const transactRatiosTable = (rows: TransactRow[]): string => {
  const lines: string[][] = []
  for (const size of [...new Set(rows.map((r) => r.size))]) {
    for (const workload of TRANSACT_WORKLOADS) {
      for (const mine of ['ours transact', 'ours one-request'] as const) {
        const ours = findRow(rows, mine, workload, size)
        if (ours === undefined) continue
        for (const against of ['theirs', 'seed pattern'] as const) {
          const other = findRow(rows, against, workload, size)
          if (other === undefined) continue
          const unitsKnown = ours.unreportedWritesPerRecord === 0 && other.unreportedWritesPerRecord === 0
          lines.push([`${mine} / ${against}`, workload, String(size), fmt(ratio(ours.requestsPerRecord, other.requestsPerRecord), 3),
            unitsKnown ? fmt(ratio(ours.writeUnitsPerRecord, other.writeUnitsPerRecord), 3) : 'n/a †',
            unitsKnown ? `${fmt(ours.writeUnitsPerRecord + ours.readUnitsPerRecord, 3)} / ${fmt(other.writeUnitsPerRecord + other.readUnitsPerRecord, 3)}` : 'n/a †',
            fmt(ratio(ours.medianMs, other.medianMs)), fmt(ratio(ours.cpuMs, other.cpuMs))])
        }
      }
    }
  }
  return table(['ratio', 'workload', 'batch', 'requests', 'write units', 'capacity units per record (W + R), each', 'median time', 'node CPU'], lines)
}

/**
 * Issue 10's targets for the one-request mode, at every batch size, as rows of the Targets
 * table: requests ≤ 0.5 and median batch time ≤ 0.7 of Powertools on new records; requests and
 * write units equal to the hand-written seed pattern's. Plus, for redeliveries, the bench's
 * general target for duplicates (≤ 0.1 request per record).
 */
export const transactTargets = (rows: TransactRow[]): string[][] => {
  const lines: string[][] = []
  const verdict = (ok: boolean): string => ok ? 'PASS' : 'MISS'
  const sizes = [...new Set(rows.map((r) => r.size))]
  for (const size of sizes) {
    const one = findRow(rows, 'ours one-request', 'all new', size)
    const theirs = findRow(rows, 'theirs', 'all new', size)
    const seed = findRow(rows, 'seed pattern', 'all new', size)
    if (one === undefined) continue
    if (theirs !== undefined) {
      const requests = ratio(one.requestsPerRecord, theirs.requestsPerRecord)
      const time = ratio(one.medianMs, theirs.medianMs)
      lines.push([`transact one-request mode, requests, all new, batch ${size} (ours/theirs), issue 10`, fmt(requests, 3), '≤ 0.5', verdict(requests <= 0.5)])
      lines.push([`transact one-request mode, median batch time, all new, batch ${size} (ours/theirs), issue 10`, fmt(time, 3), '≤ 0.7', verdict(time <= 0.7)])
    }
    if (seed !== undefined) {
      const requests = ratio(one.requestsPerRecord, seed.requestsPerRecord)
      const units = ratio(one.writeUnitsPerRecord, seed.writeUnitsPerRecord)
      lines.push([`transact one-request mode, requests, all new, batch ${size} (ours/seed pattern), issue 10`, fmt(requests, 3), '= 1', verdict(Math.abs(requests - 1) < 1e-9)])
      lines.push([`transact one-request mode, write units, all new, batch ${size} (ours/seed pattern), issue 10`, fmt(units, 3), '= 1', verdict(Math.abs(units - 1) < 1e-9)])
    }
  }
  for (const size of sizes) {
    const dup = findRow(rows, 'ours one-request', 'redelivered duplicates', size)
    if (dup !== undefined) lines.push([`transact one-request mode, requests/record, redelivered duplicates, batch ${size} (ours, absolute)`, fmt(dup.requestsPerRecord, 3), '≤ 0.1', verdict(dup.requestsPerRecord <= 0.1)])
  }
  return lines
}

export const TRANSACT_NOTE = 'Each record\'s effect is one put of its order (about 200 bytes) into an orders table. ' +
  '"all new": N new records. "redelivered duplicates": the same N records again (same messageId and body, ApproximateReceiveCount 2), ' +
  'after the originals were processed untimed by the same contender. ' +
  '"ours transact": `perRecord` + `transact` (PutItem claim, then one TransactWriteItems of the order and the fenced completion); ' +
  'its redeliveries take the same path as the one-request mode (one BatchGetItem per 100 records), so they are not run twice. ' +
  '"ours one-request": the same handler with `effects: \'transact-only\'` (no claim: one TransactWriteItems of the order and a put of the COMPLETED record, ' +
  'conditioned as the claim is; redeliveries read in bulk first and replayed without running). ' +
  '"seed pattern": no library, one TransactWriteItems of the order and an idempotency marker put with `attribute_not_exists`; ' +
  'a redelivery builds its order again (ran/batch counts that) and sends the transaction, which the marker cancels. ' +
  '"theirs": Powertools `makeIdempotent` around a function that puts the order with its own PutItem (claim, effect, completion); ' +
  'a redelivery is one refused claim PutItem returning the stored record. ' +
  'WCU/rec as DynamoDB Local reported them: an item written in a transaction costs 2 write units per KB (prepare and commit), ' +
  'as AWS bills it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling); ' +
  '`*`: refused conditional writes, computed by the rule of the batches table (at least 1 WCU per KB of the larger item). ' +
  '†: a cancelled transaction comes back as TransactionCanceledException without ConsumedCapacity, and the bench applies no rule to it, ' +
  'so the seed pattern\'s redeliveries show their cancelled transactions per record instead of write units, and their ratios are n/a.'
