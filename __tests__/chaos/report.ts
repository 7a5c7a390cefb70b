import type { ChaosReport } from './audit.js'

/** Counters a run reports and the totals simply add up. */
type Summed = 'messages' | 'producerDuplicates' | 'deliveries' | 'invocations' | 'lostAcks' | 'handlerThrows'
  | 'transientFailures' | 'crashes' | 'faultsInjected' | 'faultsSurfaced' | 'effects'

/** Sums the figures of many runs, for `npm run chaos`. */
export interface ChaosTotals extends Pick<ChaosReport, Summed> {
  runs: number
  duplicateEffects: Record<string, number>
  /** Duplicate effects by window: `own-record` (inside one record's own window) and `other` (anything else). */
  duplicateWindows: Record<string, number>
  lost: number
  liveLocks: number
  leftoverLocks: Record<string, number>
  deadLettered: number
  partialAnswers: number
  unreadableAnswers: number
  orderViolations: number
  completionsUndone: number
  /** Of those, undone by a restart of the store's server. */
  completionsForgotten: number
  restarts: number
  recordsForgotten: number
  outageRefusals: number
  killsWithAofUnwritten: number
  refusedCommits: Record<string, number>
  failedSeeds: string[]
}

const add = (into: Record<string, number>, from: Record<string, number>): void => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v
}

export const emptyTotals = (): ChaosTotals => ({
  runs: 0, messages: 0, producerDuplicates: 0, deliveries: 0, invocations: 0, lostAcks: 0, handlerThrows: 0, transientFailures: 0,
  crashes: {}, faultsInjected: {}, faultsSurfaced: {}, effects: 0, duplicateEffects: {}, duplicateWindows: { 'own-record': 0, other: 0 }, lost: 0, liveLocks: 0, leftoverLocks: {},
  deadLettered: 0, partialAnswers: 0, unreadableAnswers: 0, orderViolations: 0, completionsUndone: 0, completionsForgotten: 0, restarts: 0, recordsForgotten: 0, outageRefusals: 0, killsWithAofUnwritten: 0, refusedCommits: {}, failedSeeds: []
})

export const accumulate = (totals: ChaosTotals, report: ChaosReport): void => {
  totals.runs++
  totals.messages += report.messages
  totals.producerDuplicates += report.producerDuplicates
  totals.deliveries += report.deliveries
  totals.invocations += report.invocations
  totals.lostAcks += report.lostAcks
  totals.handlerThrows += report.handlerThrows
  totals.transientFailures += report.transientFailures
  add(totals.crashes, report.crashes)
  add(totals.faultsInjected, report.faultsInjected)
  add(totals.faultsSurfaced, report.faultsSurfaced)
  totals.effects += report.effects
  for (const d of report.duplicateEffects) {
    add(totals.duplicateEffects, { [d.cause]: 1 })
    add(totals.duplicateWindows, { [d.window]: 1 })
  }
  totals.lost += report.lost.length
  totals.liveLocks += report.leftoverLocks.filter((l) => l.live).length
  for (const l of report.leftoverLocks) add(totals.leftoverLocks, { [l.cause]: 1 })
  totals.deadLettered += report.deadLettered
  totals.partialAnswers += report.partialAnswers
  totals.unreadableAnswers += report.unreadableAnswers
  totals.orderViolations += report.orderViolations.length
  totals.completionsUndone += report.completionsUndone.length
  totals.completionsForgotten += report.completionsForgotten.length
  totals.restarts += report.restarts
  totals.recordsForgotten += report.recordsForgotten
  totals.outageRefusals += report.outageRefusals
  totals.killsWithAofUnwritten += report.killsWithAofUnwritten
  add(totals.refusedCommits, report.refusedCommits)
  if (report.violations.length > 0) totals.failedSeeds.push(`${report.profile} ${report.seed}`)
}

const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0)
const list = (r: Record<string, number>): string => Object.entries(r).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'

/** A store server's restarts, in a few words (nothing when it had none). */
const restartsOf = (r: { restarts: number, recordsForgotten: number, outageRefusals: number, killsWithAofUnwritten: number }, undone: number): string => r.restarts === 0
  ? ''
  : `, ${r.restarts} server restarts (${r.recordsForgotten} records lost by them, ${undone} completions undone, ${r.outageRefusals} store requests refused while down, ` +
    `${r.killsWithAofUnwritten} kills with acknowledged writes still in the AOF buffer)`

/** One line per profile: the figures issue 7 compares before and after. */
export const describeProfile = (profile: string, t: ChaosTotals): string =>
  `${profile.padEnd(14)} ${t.runs} runs, ${t.effects} effects, ${sum(t.duplicateEffects)} duplicate effects ` +
  `(own record's window ${t.duplicateWindows['own-record'] ?? 0}, anything else ${t.duplicateWindows.other ?? 0}; ${list(t.duplicateEffects)}), ` +
  `${t.lost} lost, ${t.liveLocks} live locks, ${t.orderViolations} order violations (FIFO group, partition key or topic-partition), ${t.deadLettered} dead-lettered, ` +
  `${t.partialAnswers} partial answers (${t.unreadableAnswers} unreadable)` +
  restartsOf(t, t.completionsForgotten)

/** One line per run. */
export const describeRun = (r: ChaosReport): string =>
  `seed ${r.seed} (${r.label}): ${r.messages} messages (${r.producerDuplicates} producer duplicates), ${r.invocations} invocations, ` +
  `${sum(r.faultsInjected)} faults injected, ${sum(r.crashes)} crashes, ${r.lostAcks} lost acks, ${r.duplicateEffects.length} duplicate effects, ` +
  `${r.lost.length} lost, ${r.leftoverLocks.filter((l) => l.live).length} live locks, ${r.deadLettered} dead-lettered` +
  restartsOf(r, r.completionsForgotten.length) +
  (r.violations.length === 0 ? '' : `\n  VIOLATIONS (replay with CHAOS_SEED=${r.seed} CHAOS_PROFILE=${r.profile}):\n  - ${r.violations.slice(0, 20).join('\n  - ')}`)

export const describeTotals = (t: ChaosTotals): string => {
  const explained = (t.duplicateEffects['crash-between-effect-and-completion'] ?? 0) + (t.duplicateEffects['completion-fault'] ?? 0)
  return [
    `runs:                      ${t.runs}`,
    `messages:                  ${t.messages} (of which producer duplicates: ${t.producerDuplicates})`,
    `deliveries / invocations:  ${t.deliveries} / ${t.invocations}`,
    `lost acknowledgements:     ${t.lostAcks}`,
    `handler throws:            ${t.handlerThrows}`,
    `transient failures:        ${t.transientFailures}`,
    `crashes:                   ${sum(t.crashes)} (${list(t.crashes)})`,
    `store faults injected:     ${sum(t.faultsInjected)} (${list(t.faultsInjected)})`,
    `  store requests failed:   ${sum(t.faultsSurfaced)} (${list(t.faultsSurfaced)})`,
    `effects (charges):         ${t.effects}`,
    `duplicate effects:         ${sum(t.duplicateEffects)} (explained by the physical limit: ${explained}; ${list(t.duplicateEffects)})`,
    `  by window:               inside one record's own window ${t.duplicateWindows['own-record'] ?? 0}, anything else ${t.duplicateWindows.other ?? 0}`,
    `messages lost:             ${t.lost}`,
    `live locks left:           ${t.liveLocks}`,
    `lapsed locks left:         ${sum(t.leftoverLocks)} (${list(t.leftoverLocks)})`,
    `dead-lettered:             ${t.deadLettered} (DLQ, or a stream's on-failure destination)`,
    `answers with failures:     ${t.partialAnswers} (answers Lambda could not read: ${t.unreadableAnswers})`,
    `order violations:          ${t.orderViolations} (a FIFO group's, a partition key's or a topic-partition's later record took effect first)`,
    `COMPLETED then undone:     ${t.completionsUndone} (by a server restart: ${t.completionsForgotten})`,
    `store server restarts:     ${t.restarts} (records lost by them: ${t.recordsForgotten}; store requests refused while down: ${t.outageRefusals}; ` +
      `kills with acknowledged writes still in the AOF buffer: ${t.killsWithAofUnwritten})`,
    `transact commits refused:  ${sum(t.refusedCommits)} (${list(t.refusedCommits)})`,
    `seeds with violations:     ${t.failedSeeds.length === 0 ? 'none' : t.failedSeeds.join(', ')}`
  ].join('\n')
}
