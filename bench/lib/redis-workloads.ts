/**
 * The Redis batches: ours (`RedisStore`) and Powertools' cache store, each with its own
 * node-redis client connected through the delaying proxy to one redis-server that nothing
 * else uses. Rounds alternate ours, theirs, ours ...; before each, the database is emptied
 * (through a direct, uncounted connection) and the originals of a redelivery are delivered
 * untimed. Around the timed batch alone, two counts: what the clients sent (the proxy, on the
 * wire) and what the server ran (`INFO commandstats`, which also counts the commands a Lua
 * script runs). Neither trusts either library.
 */
import type { Context, SQSEvent } from 'aws-lambda'
import { performance } from 'node:perf_hooks'
import { createClient, type RedisClientType } from 'redis'
import { createOursRedisHandler } from '../handlers/ours-redis.js'
import { createTheirsRedisHandler } from '../handlers/theirs-redis.js'
import { workCounter } from '../handlers/work.js'
import { type DelayProxy, wireDiff } from './delay-proxy.js'
import { lambdaContext, roundOf, type Workload } from './events.js'

export const REDIS_WORKLOADS: Workload[] = ['all new', 'all duplicates', 'half and half']

type Invoke = (event: SQSEvent, context: Context) => Promise<unknown>

/** A node-redis client (named here: its inferred type would point into node_modules). */
export type Client = RedisClientType

/** A node-redis client connected to `url` (both contenders' clients, and the bench's own). */
export const connectClient = async (url: string): Promise<Client> => await createClient({ url }).connect()

export interface RedisContender { implementation: 'ours' | 'theirs', client: Client, invoke: Invoke }

/** What one implementation did in one timed batch. */
export interface RedisSample {
  ms: number
  /** CPU time of this Node process (user + system) during the batch: the client-side cost. */
  cpuMs: number
  records: number
  /** Commands the client sent, by name (the proxy). */
  sent: Record<string, number>
  /** Writes (chunks) the client sent. */
  writes: number
  /** Writes that followed an answer: the round trips the batch waited for, each paying the proxy's delay once. */
  roundTrips: number
  /** Bytes the client sent. */
  bytes: number
  /** Commands the server ran, by name, those inside Lua scripts included (INFO commandstats). */
  ran: Record<string, number>
  failed: number
  runs: number
}

/** Both contenders, each with a client of its own connected through `proxy`. */
export const redisContenders = async (proxy: DelayProxy, oursConcurrency?: number): Promise<RedisContender[]> => {
  const ours = await connectClient(proxy.url)
  const theirs = await connectClient(proxy.url)
  return [
    {
      implementation: 'ours',
      client: ours,
      invoke: createOursRedisHandler({ client: ours, maxStoreRequests: oursConcurrency }) as unknown as Invoke
    },
    { implementation: 'theirs', client: theirs, invoke: createTheirsRedisHandler({ client: theirs }) as Invoke }
  ]
}

/** Calls by command (lowercase, subcommands as `config|resetstat`), from `INFO commandstats`. */
export const commandStats = async (admin: Client): Promise<Record<string, number>> => {
  const info = await admin.info('commandstats')
  const calls: Record<string, number> = {}
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1] as string] = Number(match[2])
  return calls
}

// The bench's own questions to the server, on the admin connection.
const ADMIN = new Set(['info', 'flushdb'])

const statsDiff = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after)
    .filter(([name]) => !ADMIN.has(name))
    .map(([name, n]) => [name, n - (before[name] ?? 0)] as const)
    .filter(([, n]) => n > 0))

const failedCount = (response: unknown): number =>
  ((response as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures ?? []).length

/** One round of one workload for one contender, on an emptied database. */
export const runRedisRound = async (admin: Client, proxy: DelayProxy, contender: RedisContender, workload: Workload, size: number): Promise<RedisSample> => {
  const round = roundOf(workload, size)
  const context = lambdaContext(process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench')
  await admin.flushDb()
  if (round.setup !== undefined && failedCount(await contender.invoke(round.setup, context)) > 0) {
    throw new Error(`${contender.implementation}: setup batch of ${workload} reported failures`)
  }
  const wireBefore = await proxy.counts()
  const statsBefore = await commandStats(admin)
  const runsBefore = workCounter.runs
  const cpuBefore = process.cpuUsage()
  const start = performance.now()
  const response = await contender.invoke(round.timed, context)
  const ms = performance.now() - start
  const cpu = process.cpuUsage(cpuBefore)
  const runs = workCounter.runs - runsBefore
  const wire = wireDiff(wireBefore, await proxy.counts())
  return {
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    records: round.timed.Records.length,
    sent: wire.commands,
    writes: wire.writes,
    roundTrips: wire.roundTrips,
    bytes: wire.bytes,
    ran: statsDiff(statsBefore, await commandStats(admin)),
    failed: failedCount(response),
    runs
  }
}

/**
 * Rounds of every workload, interleaved ours, theirs, ours ..., after `warmup` rounds of each
 * (not recorded: each script loaded once after a NOSCRIPT, and the JIT, which takes a few
 * batches: the first batches of either are ten times slower than a warm function's).
 */
export const redisRounds = async (admin: Client, proxy: DelayProxy, contenders: RedisContender[], size: number, { rounds, warmup }: { rounds: number, warmup: number },
  progress: (text: string) => void): Promise<Map<string, RedisSample[]>> => {
  for (let round = 0; round < warmup; round++) {
    for (const workload of REDIS_WORKLOADS) for (const contender of contenders) await runRedisRound(admin, proxy, contender, workload, size)
  }
  const samples = new Map<string, RedisSample[]>()
  // Every round runs every workload, so that a change in the machine's load over the run
  // falls on all workloads alike, not on whichever ran last.
  for (let round = 0; round < rounds; round++) {
    // Who goes first alternates too, so neither always follows the other's garbage.
    const order = round % 2 === 0 ? contenders : [...contenders].reverse()
    for (const workload of REDIS_WORKLOADS) {
      for (const contender of order) {
        const key = `${contender.implementation}|${workload}`
        samples.set(key, [...(samples.get(key) ?? []), await runRedisRound(admin, proxy, contender, workload, size)])
      }
    }
    if ((round + 1) % 10 === 0 || round + 1 === rounds) progress(`redis: ${round + 1} of ${rounds} rounds of ${size}`)
  }
  return samples
}
