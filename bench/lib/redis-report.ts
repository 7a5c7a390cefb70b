/**
 * The Redis section's tables: per implementation and workload, batch time, commands per
 * record (sent, and run by the server), client writes; ratios ours/theirs; and the targets of
 * the Redis issue, as lines for the report's Targets table.
 */
import { fmt, ratio, table } from './report.js'
import type { RedisBundleFigures } from './redis-bundle.js'
import { sdkModulesOf } from './redis-bundle.js'
import type { RedisSample } from './redis-workloads.js'
import { mean, median, percentile } from './stats.js'
import type { Workload } from './events.js'

export interface RedisRow {
  implementation: 'ours' | 'theirs'
  workload: Workload
  rounds: number
  medianMs: number
  p95Ms: number
  cpuMs: number
  /** Commands sent per record, in all and by name. */
  commandsPerRecord: number
  sent: Record<string, number>
  /** Commands the server ran per record (inside scripts included), in all and by name. */
  ranPerRecord: number
  ran: Record<string, number>
  writesPerBatch: number
  roundTripsPerBatch: number
  bytesPerRecord: number
  failedPerBatch: number
  runsPerBatch: number
  /** Every sample's two counts agree: each command sent was run; EVAL/EVALSHA (never run by a script) as often as sent; without scripts, the same totals. */
  countsAgree: boolean
}

const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0)

const agree = (s: RedisSample): boolean => {
  const scripts = (s.sent.eval ?? 0) + (s.sent.evalsha ?? 0)
  return Object.entries(s.sent).every(([name, n]) => (s.ran[name] ?? 0) >= n) &&
    ['eval', 'evalsha'].every((name) => (s.ran[name] ?? 0) === (s.sent[name] ?? 0)) &&
    (scripts > 0 || total(s.ran) === total(s.sent))
}

const perRecordBy = (samples: RedisSample[], pick: (s: RedisSample) => Record<string, number>): Record<string, number> => {
  const records = samples[0]?.records ?? 1
  const names = [...new Set(samples.flatMap((s) => Object.keys(pick(s))))].sort()
  return Object.fromEntries(names.map((name) => [name, mean(samples.map((s) => pick(s)[name] ?? 0)) / records]))
}

export const summariseRedis = (implementation: 'ours' | 'theirs', workload: Workload, samples: RedisSample[]): RedisRow => {
  const sent = perRecordBy(samples, (s) => s.sent)
  const ran = perRecordBy(samples, (s) => s.ran)
  return {
    implementation,
    workload,
    rounds: samples.length,
    medianMs: median(samples.map((s) => s.ms)),
    p95Ms: percentile(samples.map((s) => s.ms), 95),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    commandsPerRecord: total(sent),
    sent,
    ranPerRecord: total(ran),
    ran,
    writesPerBatch: median(samples.map((s) => s.writes)),
    roundTripsPerBatch: median(samples.map((s) => s.roundTrips)),
    bytesPerRecord: mean(samples.map((s) => s.bytes)) / (samples[0]?.records ?? 1),
    failedPerBatch: mean(samples.map((s) => s.failed)),
    runsPerBatch: mean(samples.map((s) => s.runs)),
    countsAgree: samples.every(agree)
  }
}

const breakdown = (counts: Record<string, number>): string =>
  Object.entries(counts).map(([name, n]) => `${name.toUpperCase()} ${fmt(n, 3)}`).join(' + ') || '—'

export const redisRowsTable = (rows: RedisRow[]): string => table(
  ['impl', 'workload', 'rounds', 'median ms', 'p95 ms', 'node CPU ms', 'round trips/batch', 'commands/rec', 'sent per record', 'server calls/rec (in scripts too)', 'bytes sent/rec', 'client writes/batch', 'failed/batch', 'ran/batch', 'counts agree'],
  rows.map((r) => [
    r.implementation, r.workload, String(r.rounds), fmt(r.medianMs, 1), fmt(r.p95Ms, 1), fmt(r.cpuMs, 1), fmt(r.roundTripsPerBatch, 1), fmt(r.commandsPerRecord, 3), breakdown(r.sent),
    `${fmt(r.ranPerRecord, 3)}: ${breakdown(r.ran)}`, fmt(r.bytesPerRecord, 0), fmt(r.writesPerBatch, 0), fmt(r.failedPerBatch, 1), fmt(r.runsPerBatch, 1), r.countsAgree ? 'yes' : '**no**'
  ])
)

const pairOf = (rows: RedisRow[], workload: Workload): [RedisRow | undefined, RedisRow | undefined] =>
  [rows.find((r) => r.implementation === 'ours' && r.workload === workload), rows.find((r) => r.implementation === 'theirs' && r.workload === workload)]

export const redisRatiosTable = (rows: RedisRow[]): string => table(
  ['workload', 'median time', 'p95 time', 'node CPU', 'round trips', 'commands sent', 'server calls', 'bytes sent'],
  [...new Set(rows.map((r) => r.workload))].map((workload) => {
    const [o, t] = pairOf(rows, workload)
    if (o === undefined || t === undefined) return [workload, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a']
    return [workload, fmt(ratio(o.medianMs, t.medianMs)), fmt(ratio(o.p95Ms, t.p95Ms)), fmt(ratio(o.cpuMs, t.cpuMs)),
      fmt(ratio(o.roundTripsPerBatch, t.roundTripsPerBatch)), fmt(ratio(o.commandsPerRecord, t.commandsPerRecord), 3), fmt(ratio(o.ranPerRecord, t.ranPerRecord), 3),
      fmt(ratio(o.bytesPerRecord, t.bytesPerRecord))]
  })
)

/** The Redis issue's targets, ours/theirs unless said, as rows of the Targets table. */
export const redisTargets = (rows: RedisRow[], bundles: RedisBundleFigures | undefined, size: number): string[][] => {
  const lines: string[][] = []
  const check = (name: string, measured: number, limit: number): void => {
    lines.push([name, fmt(measured, 3), `≤ ${limit}`, measured <= limit ? 'PASS' : 'MISS'])
  }
  const [oursDup, theirsDup] = pairOf(rows, 'all duplicates')
  if (oursDup !== undefined && theirsDup !== undefined) check(`redis: commands per redelivered duplicate, batch ${size} (ours/theirs)`, ratio(oursDup.commandsPerRecord, theirsDup.commandsPerRecord), 0.5)
  const limits: Array<[Workload, number]> = [['all new', 1.0], ['all duplicates', 0.4], ['half and half', 0.8]]
  for (const [workload, limit] of limits) {
    const [o, t] = pairOf(rows, workload)
    if (o !== undefined && t !== undefined) check(`redis: median batch time, ${workload === 'all duplicates' ? 'redelivered duplicates' : workload}, batch ${size} (ours/theirs)`, ratio(o.medianMs, t.medianMs), limit)
  }
  if (bundles !== undefined) {
    const modules = sdkModulesOf(bundles.bundles.find((b) => b.implementation === 'ours-redis'))
    lines.push(['redis: the typical Redis SQS handler loads no AWS SDK module (ours, esbuild metafile)', modules.length === 0 ? 'none' : modules.join(', '), 'none', modules.length === 0 ? 'PASS' : 'MISS'])
  }
  return lines
}
