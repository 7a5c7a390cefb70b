/**
 * The `redis` section of `npm run bench`: ours (`RedisStore`) against Powertools' cache store
 * (`CachePersistenceLayer`), both on node-redis, on one redis-server started here (no
 * persistence, nothing else on it) behind a proxy that gives every round trip about a
 * millisecond, as to ElastiCache in the same AZ. On loopback Redis answers in microseconds and
 * a client that waits for ten round trips looks no slower than one that waits for two.
 */
import { startRedisServer } from '../../scripts/redis-server.mjs'
import { pingRoundTripMs, startDelayProxy } from './delay-proxy.js'
import { fmt } from './report.js'
import { redisBundleReport, redisBundles, type RedisBundleFigures } from './redis-bundle.js'
import { redisRatiosTable, redisRowsTable, summariseRedis, type RedisRow } from './redis-report.js'
import { connectClient, REDIS_WORKLOADS, redisContenders, redisRounds } from './redis-workloads.js'

export interface RedisOptions {
  size: number
  rounds: number
  /** Rounds of each workload per implementation before those recorded. */
  warmup: number
  coldImports: number
  /** The middleware's `maxStoreRequests` for ours (`BENCH_REDIS_CONCURRENCY`); its default (50) when undefined. */
  oursConcurrency?: number
  /** Delay the proxy adds to each chunk a client sends; `BENCH_REDIS_DELAY_MS`, default 1. */
  delayMs: number
  progress: (text: string) => void
}

export interface RedisResult {
  rows: RedisRow[]
  bundles: RedisBundleFigures
  /** Median PING round trip, straight to the server and through the proxy. */
  directRttMs: number
  proxiedRttMs: number
  options: RedisOptions
}

export const redisSection = async (options: RedisOptions): Promise<RedisResult> => {
  const { size, rounds, delayMs, progress } = options
  const server = await startRedisServer()
  try {
    const proxy = await startDelayProxy(server.port, delayMs)
    try {
      // The admin connection goes straight to the server: emptying the database and reading
      // the command stats are neither delayed nor counted on the wire.
      const admin = await connectClient(server.url)
      const contenders = await redisContenders(proxy, options.oursConcurrency).catch(async (error: unknown) => { admin.destroy(); throw error })
      try {
        const directRttMs = await pingRoundTripMs(server.port)
        const proxiedRttMs = await pingRoundTripMs(proxy.port)
        progress(`redis: round trip ${fmt(directRttMs, 3)} ms direct, ${fmt(proxiedRttMs, 3)} ms through the proxy`)
        const samples = await redisRounds(admin, proxy, contenders, size, { rounds, warmup: options.warmup }, progress)
        const rows = REDIS_WORKLOADS.flatMap((workload) => contenders.map((c) =>
          summariseRedis(c.implementation, workload, samples.get(`${c.implementation}|${workload}`) ?? [])))
        progress('redis: bundles and cold imports')
        const bundles = await redisBundles(options.coldImports)
        return { rows, bundles, directRttMs, proxiedRttMs, options }
      } finally {
        for (const client of [admin, ...contenders.map((c) => c.client)]) client.destroy()
      }
    } finally {
      await proxy.stop()
    }
  } finally {
    await server.stop()
  }
}

export const redisReport = ({ rows, bundles, directRttMs, proxiedRttMs, options }: RedisResult): string[] => [
  '## Redis: RedisStore vs Powertools\' cache store',
  '',
  `Batches of ${options.size} SQS records, ${options.rounds} rounds, each of every workload, interleaved ours, theirs (who goes first alternates), ` +
    `after ${options.warmup} warm-up rounds of each (a warm function); the database emptied before each round; the originals of a redelivery delivered first, untimed. ` +
    'Ours: `idempotency({ store: new RedisStore({ client }) })` + `perRecord` + sqs-partial-batch-failure (`handlers/ours-redis.ts`); ' +
    'theirs: `makeIdempotent` + `CachePersistenceLayer({ client })` + `BatchProcessor`/`processPartialResponse` (`handlers/theirs-redis.ts`); ' +
    'each with its own node-redis client, defaults otherwise' +
    (options.oursConcurrency === undefined
      ? '.'
      : ` **except ours' \`maxStoreRequests\`: ${options.oursConcurrency}** (BENCH_REDIS_CONCURRENCY).`),
  '',
  `One redis-server (no persistence, used by nothing else), reached through a TCP proxy on loopback in its own process that holds each chunk ` +
    `a client writes for ${options.delayMs} ms: measured PING round trip ${fmt(proxiedRttMs, 2)} ms through it, ${fmt(directRttMs, 3)} ms straight to the server. ` +
    'Commands pipelined in one write share one delay.',
  '',
  redisRowsTable(rows),
  '',
  'commands/rec: commands the client sent in the timed batch, counted on the wire by the proxy, per record. ' +
    'Server calls: `INFO commandstats` before and after the timed batch (the bench\'s own INFO and FLUSHDB left out), which also counts each ' +
    'command a Lua script runs: on one server ours sends one `EVALSHA` for the claims issued together (at most 100 a command) and one for the ' +
    'completions of records whose work ended together, and the server runs each call\'s `GET` and `SET` inside it; a slice of reads is one `MGET`. counts agree: every command sent was run, `EVAL`/`EVALSHA` exactly as often as sent, and without scripts the same totals. ' +
    'round trips/batch (median): the client\'s writes that came after it was given an answer, i.e. the times the batch waited for the server; ' +
    'each pays the delay once, and the commands written together share it. client writes/batch: all its writes (a pipeline of more than about 16 KB ' +
    'leaves the client in several). bytes sent/rec: what the client wrote, per record. ' +
    'ran/batch: calls of the business function (a duplicate must not run). Times are printed, never asserted.',
  '',
  '### Ratios ours / theirs (below 1: ours is lower)',
  '',
  redisRatiosTable(rows),
  '',
  ...redisBundleReport(bundles, options.coldImports),
  ''
]
