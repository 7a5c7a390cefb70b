/**
 * `npm run chaos`: the chaos suite at a size CI does not afford. Starts its own DynamoDB
 * Local, runs many seeds over thousands of messages, prints the figures, and exits
 * non-zero when an invariant breaks.
 *
 *   npm run chaos                                         # standard seeds 1..24, contention 1..8, transact 1..8,
 *                                                         # transact-only 1..8, stream 1..8, kafka 1..8, promises 1..8, managed 1..8, 400 payments each,
 *                                                         # and seeds 1..4 of each Redis profile (redis-none, redis-everysec, redis-always)
 *   CHAOS_SEED=17 npm run chaos                           # replay one seed (profile standard)
 *   CHAOS_SEED=5 CHAOS_PROFILE=contention npm run chaos   # replay one contention seed
 *   CHAOS_SEED=2 CHAOS_PROFILE=stream npm run chaos       # replay one Kinesis stream seed
 *   CHAOS_SEED=4 CHAOS_PROFILE=kafka npm run chaos        # replay one Kafka seed
 *   CHAOS_SEED=3 CHAOS_PROFILE=redis-none npm run chaos   # replay one Redis seed (its restarts too)
 *   CHAOS_SEEDS=100 CHAOS_CONTENTION_SEEDS=20 CHAOS_TRANSACT_SEEDS=20 CHAOS_TRANSACT_ONLY_SEEDS=20 CHAOS_STREAM_SEEDS=20 CHAOS_KAFKA_SEEDS=20 CHAOS_PAYMENTS=1000 npm run chaos
 *   CHAOS_SEEDS=0 CHAOS_CONTENTION_SEEDS=0 CHAOS_TRANSACT_SEEDS=0 CHAOS_TRANSACT_ONLY_SEEDS=0 CHAOS_STREAM_SEEDS=0 CHAOS_KAFKA_SEEDS=0 CHAOS_PROMISES_SEEDS=0 npm run chaos
 *                                                         # the Redis profiles only (CHAOS_REDIS_SEEDS each; no DynamoDB Local)
 *   CHAOS_SEED=2 CHAOS_PROFILE=managed npm run chaos      # replay one Managed Instances seed (several invocations per process)
 *   CHAOS_PROFILES=kafka npm run chaos                    # only the profiles named (comma-separated), at their usual seed counts
 *
 * Each Redis run starts its own redis-server (and restarts it); DynamoDB Local is started only when a DynamoDB run is planned.
 */
import { startDynamoDBLocal } from '../../scripts/dynamodb-local.mjs'
import { profiles, type Profile } from './configs.js'
import { accumulate, describeProfile, describeRun, describeTotals, emptyTotals, type ChaosTotals } from './report.js'
import { runChaos } from './scenario.js'

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'

const numberFrom = (name: string, fallback: number): number => {
  const value = process.env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`${name} must be a non-negative integer, not ${value}`)
  return parsed
}

const seedsOf = (count: number): number[] => Array.from({ length: count }, (_, i) => i + 1)

const plan = (): Array<[Profile, number]> => {
  const replay = process.env.CHAOS_SEED
  if (replay !== undefined && replay !== '') {
    const profile = (process.env.CHAOS_PROFILE ?? 'standard') as Profile
    if (!(profile in profiles)) throw new Error(`CHAOS_PROFILE must be one of ${Object.keys(profiles).join(', ')}`)
    return [[profile, numberFrom('CHAOS_SEED', 0)]]
  }
  const only = (process.env.CHAOS_PROFILES ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '')
  const unknown = only.filter((p) => !(p in profiles))
  if (unknown.length > 0) throw new Error(`CHAOS_PROFILES names no profile ${unknown.join(', ')}: one of ${Object.keys(profiles).join(', ')}`)
  const all: Array<[Profile, number]> = [
    ...seedsOf(numberFrom('CHAOS_SEEDS', 24)).map((seed): [Profile, number] => ['standard', seed]),
    ...seedsOf(numberFrom('CHAOS_CONTENTION_SEEDS', 8)).map((seed): [Profile, number] => ['contention', seed]),
    ...seedsOf(numberFrom('CHAOS_TRANSACT_SEEDS', 8)).map((seed): [Profile, number] => ['transact', seed]),
    ...seedsOf(numberFrom('CHAOS_TRANSACT_ONLY_SEEDS', 8)).map((seed): [Profile, number] => ['transact-only', seed]),
    ...seedsOf(numberFrom('CHAOS_STREAM_SEEDS', 8)).map((seed): [Profile, number] => ['stream', seed]),
    ...seedsOf(numberFrom('CHAOS_KAFKA_SEEDS', 8)).map((seed): [Profile, number] => ['kafka', seed]),
    ...seedsOf(numberFrom('CHAOS_PROMISES_SEEDS', 8)).map((seed): [Profile, number] => ['promises', seed]),
    ...seedsOf(numberFrom('CHAOS_MANAGED_SEEDS', 8)).map((seed): [Profile, number] => ['managed', seed]),
    ...(['redis-none', 'redis-everysec', 'redis-always'] as const).flatMap((profile) => seedsOf(numberFrom('CHAOS_REDIS_SEEDS', 4)).map((seed): [Profile, number] => [profile, seed]))
  ]
  return only.length === 0 ? all : all.filter(([profile]) => only.includes(profile))
}

const main = async (): Promise<number> => {
  const runs = plan()
  const payments = numberFrom('CHAOS_PAYMENTS', 400)
  const local = runs.some(([profile]) => !profile.startsWith('redis-')) ? await startDynamoDBLocal() : undefined
  const endpoint = local?.endpoint ?? 'http://127.0.0.1:1 (no DynamoDB run planned)'
  process.env.DYNAMODB_ENDPOINT = endpoint
  const totals = emptyTotals()
  const byProfile = new Map<string, ChaosTotals>()
  const started = Date.now()
  try {
    for (const [profile, seed] of runs) {
      const report = await runChaos(profiles[profile](seed, payments, endpoint))
      accumulate(totals, report)
      if (!byProfile.has(profile)) byProfile.set(profile, emptyTotals())
      accumulate(byProfile.get(profile) as ChaosTotals, report)
      console.log(describeRun(report))
    }
  } finally {
    await local?.stop()
  }
  console.log(`\nchaos: ${runs.length} runs in ${((Date.now() - started) / 1000).toFixed(1)} s\n${describeTotals(totals)}`)
  console.log(`\nby profile:\n${[...byProfile].map(([profile, t]) => describeProfile(profile, t)).join('\n')}`)
  return totals.failedSeeds.length === 0 ? 0 : 1
}

main().then((code) => { process.exitCode = code }, (error: unknown) => {
  console.error(error)
  process.exitCode = 2
})
