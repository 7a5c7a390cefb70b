/**
 * `npm run chaos`: the chaos suite at a size CI does not afford. Starts its own DynamoDB
 * Local, runs many seeds over thousands of messages, prints the figures, and exits
 * non-zero when an invariant breaks.
 *
 *   npm run chaos                       # seeds 1..24, 400 payments each
 *   CHAOS_SEED=17 npm run chaos         # replay one seed
 *   CHAOS_SEEDS=100 CHAOS_PAYMENTS=1000 npm run chaos
 */
import { startDynamoDBLocal } from '../../scripts/dynamodb-local.mjs'
import { configFor } from './configs.js'
import { accumulate, describeRun, describeTotals, emptyTotals } from './report.js'
import { runChaos } from './scenario.js'

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'

const numberFrom = (name: string, fallback: number): number => {
  const value = process.env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`${name} must be a non-negative integer, not ${value}`)
  return parsed
}

const main = async (): Promise<number> => {
  const replay = process.env.CHAOS_SEED
  const seeds = replay === undefined || replay === ''
    ? Array.from({ length: numberFrom('CHAOS_SEEDS', 24) }, (_, i) => i + 1)
    : [numberFrom('CHAOS_SEED', 0)]
  const payments = numberFrom('CHAOS_PAYMENTS', 400)
  const local = await startDynamoDBLocal()
  process.env.DYNAMODB_ENDPOINT = local.endpoint
  const totals = emptyTotals()
  const started = Date.now()
  try {
    for (const seed of seeds) {
      const report = await runChaos(configFor(seed, payments, local.endpoint))
      accumulate(totals, report)
      console.log(describeRun(report))
    }
  } finally {
    await local.stop()
  }
  console.log(`\nchaos: ${seeds.length} seeds in ${((Date.now() - started) / 1000).toFixed(1)} s\n${describeTotals(totals)}`)
  return totals.failedSeeds.length === 0 ? 0 : 1
}

main().then((code) => { process.exitCode = code }, (error: unknown) => {
  console.error(error)
  process.exitCode = 2
})
