import { describe, expect, test } from '@jest/globals'
import { endpoint } from '../support/dynamodb.js'
import type { ChaosReport } from './audit.js'
import { configFor } from './configs.js'
import { describeRun } from './report.js'
import { runChaos } from './scenario.js'

/**
 * The chaos suite at CI size: a few seeds of a few hundred messages each, through the
 * real Middy stack against DynamoDB Local. A failing seed is printed; replay it with
 * `CHAOS_SEED=<seed> npm run chaos` (or set CHAOS_SEED for this file).
 */
const replay = process.env.CHAOS_SEED
// Seeds cover both queue types, both Middy majors, batch sizes 1 to 100, 2 to 5 consumers.
const seeds = replay === undefined || replay === '' ? [1, 2, 3, 4, 6, 9] : [Number(replay)]
const PAYMENTS = 150

const runs = new Map<number, Promise<ChaosReport>>()
const reportFor = async (seed: number): Promise<ChaosReport> => {
  if (!runs.has(seed)) runs.set(seed, runChaos(configFor(seed, PAYMENTS, endpoint())))
  return await (runs.get(seed) as Promise<ChaosReport>)
}

/** Fails with the run's summary (and its seed) when `problems` is not empty. */
const expectClean = (report: ChaosReport, problems: string[]): void => {
  if (problems.length > 0) throw new Error(`${describeRun(report)}\n${problems.join('\n')}`)
}

describe.each(seeds)('chaos, seed %i', (seed) => {
  test('every duplicate effect follows an effect whose completion never reached the store (crash or completion fault)', async () => {
    const report = await reportFor(seed)
    expectClean(report, report.duplicateEffects.filter((d) => d.cause !== 'crash-between-effect-and-completion' && d.cause !== 'completion-fault')
      .map((d) => `${d.paymentId}: ${d.cause} (${d.after.invocationId} then ${d.effect.invocationId})`))
    // The run must actually have been chaotic, or the check above proves nothing.
    expect(report.producerDuplicates).toBeGreaterThan(0)
    expect(Object.keys(report.faultsInjected).length).toBeGreaterThan(0)
  }, 120_000)

  test('no message is lost: each was charged or dead-lettered, and the queue drains', async () => {
    const report = await reportFor(seed)
    expectClean(report, [...report.lost.map((id) => `lost ${id}`), ...report.notDrained.map((id) => `not drained ${id}`), ...(report.stuck ? ['stuck'] : [])])
    expect(report.messages).toBe(report.payments + report.producerDuplicates)
  }, 120_000)

  test('no live lock remains once every lease has lapsed, and every lock left behind belongs to a crashed or faulted owner', async () => {
    const report = await reportFor(seed)
    expectClean(report, report.leftoverLocks.filter((l) => l.live || l.outlivesOwner || l.cause === 'unexplained')
      .map((l) => `${l.key}: ${l.cause}${l.live ? ', live' : ''}${l.outlivesOwner ? ', outlives its owner' : ''}`))
  }, 120_000)

  test('FIFO: the effects of a group apply in send order', async () => {
    const report = await reportFor(seed)
    expectClean(report, report.orderViolations.map((v) => `${v.groupId}: ${v.messageId} before ${v.overtaken.join(', ')}`))
  }, 120_000)
})
