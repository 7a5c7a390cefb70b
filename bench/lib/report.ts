/** Turns samples into the printed tables (Markdown, so the same text goes to results/latest.md). */
import { costPerMillion } from './capacity.js'
import type { Workload } from './events.js'
import { mean, median, percentile } from './stats.js'
import type { Implementation } from './tables.js'
import type { Sample } from './throughput.js'

export interface Row {
  implementation: Implementation
  workload: Workload
  size: number
  rounds: number
  medianMs: number
  p95Ms: number
  /** Median CPU time of the Node process per batch. */
  cpuMs: number
  requestsPerRecord: number
  /** e.g. "Put 1 + Update 1" per record. */
  breakdown: string
  writeUnitsPerRecord: number
  readUnitsPerRecord: number
  /** True when part of the write units was computed by rule, not reported by DynamoDB Local. */
  computed: boolean
  costPerMillion: number
  failedPerBatch: number
  runsPerBatch: number
  maxInFlight: number
}

const short = (operation: string): string => operation.replace(/Item$/, '')

export const summarise = (implementation: Implementation, workload: Workload, size: number, samples: Sample[]): Row => {
  const records = samples[0]?.records ?? size
  const perRecord = (pick: (s: Sample) => number): number => mean(samples.map(pick)) / records
  const operations = [...new Set(samples.flatMap((s) => Object.keys(s.attempts)))].sort()
  const writeUnitsPerRecord = perRecord((s) => s.writeUnits)
  const readUnitsPerRecord = perRecord((s) => s.readUnits)
  return {
    implementation,
    workload,
    size,
    rounds: samples.length,
    medianMs: median(samples.map((s) => s.ms)),
    p95Ms: percentile(samples.map((s) => s.ms), 95),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    requestsPerRecord: perRecord((s) => Object.values(s.attempts).reduce((a, b) => a + b, 0)),
    breakdown: operations.map((op) => `${short(op)} ${fmt(perRecord((s) => s.attempts[op] ?? 0), 3)}`).join(' + '),
    writeUnitsPerRecord,
    readUnitsPerRecord,
    computed: samples.some((s) => s.computedWriteUnits > 0),
    costPerMillion: costPerMillion(writeUnitsPerRecord, readUnitsPerRecord),
    failedPerBatch: mean(samples.map((s) => s.failed)),
    runsPerBatch: mean(samples.map((s) => s.runs)),
    maxInFlight: Math.max(...samples.map((s) => s.maxInFlight))
  }
}

export const fmt = (value: number, digits = 2): string => {
  if (!Number.isFinite(value)) return 'n/a'
  return Number(value.toFixed(digits)).toString()
}

export const table = (header: string[], rows: string[][]): string =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`)
  ].join('\n')

export const rowsTable = (rows: Row[]): string => table(
  ['impl', 'workload', 'batch', 'rounds', 'median ms', 'p95 ms', 'node CPU ms', 'req/rec', 'requests per record', 'WCU/rec', 'RCU/rec', '$ per 1M rec', 'failed/batch', 'ran/batch', 'max in flight'],
  rows.map((r) => [
    r.implementation, r.workload, String(r.size), String(r.rounds), fmt(r.medianMs, 1), fmt(r.p95Ms, 1), fmt(r.cpuMs, 1), fmt(r.requestsPerRecord, 3), r.breakdown,
    `${fmt(r.writeUnitsPerRecord, 3)}${r.computed ? '*' : ''}`, fmt(r.readUnitsPerRecord, 3), `$${fmt(r.costPerMillion, 3)}`,
    fmt(r.failedPerBatch, 1), fmt(r.runsPerBatch, 1), String(r.maxInFlight)
  ])
)

export const ratio = (ours: number, theirs: number): number => theirs === 0 ? (ours === 0 ? 1 : Number.POSITIVE_INFINITY) : ours / theirs

/** Each of ours (SDK, aws-lite) against Powertools, workload by workload. */
export const ratiosTable = (rows: Row[]): string => {
  const pairs = rows.filter((r) => r.implementation !== 'theirs').map((o) => [o, rows.find((t) => t.implementation === 'theirs' && t.workload === o.workload && t.size === o.size) as Row] as const)
  return table(
    ['impl / theirs', 'workload', 'batch', 'median', 'p95', 'node CPU', 'requests', 'capacity units', 'cost'],
    pairs.map(([o, t]) => [
      o.implementation, o.workload, String(o.size), fmt(ratio(o.medianMs, t.medianMs)), fmt(ratio(o.p95Ms, t.p95Ms)), fmt(ratio(o.cpuMs, t.cpuMs)), fmt(ratio(o.requestsPerRecord, t.requestsPerRecord), 3),
      fmt(ratio(o.writeUnitsPerRecord + o.readUnitsPerRecord, t.writeUnitsPerRecord + t.readUnitsPerRecord), 3), fmt(ratio(o.costPerMillion, t.costPerMillion), 3)
    ])
  )
}

/** Requests per record of each contender side by side, and ours (SDK) / theirs. */
export const requestsTable = (rows: Row[]): string => {
  const of = (impl: Implementation, r: Row): Row | undefined => rows.find((x) => x.implementation === impl && x.workload === r.workload && x.size === r.size)
  return table(
    ['workload', 'batch', 'ours', 'ours-lite', 'theirs', 'ours / theirs', 'ours: requests per record'],
    rows.filter((r) => r.implementation === 'ours').map((r) => [
      r.workload, String(r.size), fmt(r.requestsPerRecord, 3), fmt(of('ours-lite', r)?.requestsPerRecord ?? Number.NaN, 3),
      fmt(of('theirs', r)?.requestsPerRecord ?? Number.NaN, 3), fmt(ratio(r.requestsPerRecord, of('theirs', r)?.requestsPerRecord ?? Number.NaN), 3), r.breakdown
    ])
  )
}
