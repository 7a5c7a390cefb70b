import { middyVersions } from '../support/middy.js'
import type { Rates } from './fates.js'
import type { RedisPersistence } from './redis-site.js'
import type { ChaosConfig } from './scenario.js'

/** Misfortune at rates high enough that every kind happens many times in a few hundred messages. */
export const defaultRates: Rates = {
  producerDuplicate: 0.15,
  lostAck: 0.04,
  handlerThrow: 0.03,
  transientFailure: 0.06,
  permanentFailure: 0.01,
  crash: 0.06,
  slow: 0.05,
  storeFault: 0.06,
  oversized: 0.01
}

/**
 * The runs of one seed: the seed alone picks the queue type, the batch size, the number
 * of consumers and the Middy major, so a printed seed is all it takes to replay a run.
 */
export const configFor = (seed: number, payments: number, endpoint: string, overrides: Partial<ChaosConfig> = {}): ChaosConfig => {
  const fifo = seed % 3 === 0
  const [middyName, middy] = middyVersions[seed % middyVersions.length] as (typeof middyVersions)[number]
  const functionTimeoutMs = 30_000
  return {
    seed,
    profile: 'standard',
    effects: 'ledger',
    payments,
    fifo,
    groups: Math.max(2, Math.floor(payments / 25)),
    consumers: 2 + (seed % 4),
    batchSize: fifo ? 10 : [1, 10, 25, 100][seed % 4] as number,
    functionTimeoutMs,
    // Lambda requires at least the function timeout; AWS recommends more.
    visibilityTimeoutMs: functionTimeoutMs * (1 + (seed % 3)),
    maxReceiveCount: 10,
    duplicateWithinMs: 2 * functionTimeoutMs * (1 + (seed % 3)),
    maxSkewMs: 3000,
    sdkMaxAttempts: 3,
    failFromAttempt: 7,
    localCacheSize: seed % 2 === 0 ? 100 : 0,
    rates: defaultRates,
    middy,
    middyName,
    endpoint,
    maxVirtualMs: 24 * 3600 * 1000,
    ...overrides
  }
}

/**
 * Contention: many slow handlers and producer duplicates arriving while the original is
 * still being worked on, so that leases, skewed clocks and deadlines meet often.
 */
export const contentionConfigFor = (seed: number, payments: number, endpoint: string): ChaosConfig => configFor(seed, payments, endpoint, {
  profile: 'contention',
  consumers: 5,
  duplicateWithinMs: 30_000,
  maxSkewMs: 5000,
  rates: { ...defaultRates, producerDuplicate: 0.6, slow: 0.4 }
})

/**
 * Transact: the standard runs, but a payment's effect is `transact` writes (the payment's Put
 * and its account's balance) committed with the record's completion: no window at all, so
 * not one duplicate effect may appear, whatever crashes and faults hit the commit.
 */
export const transactConfigFor = (seed: number, payments: number, endpoint: string): ChaosConfig => configFor(seed, payments, endpoint, {
  profile: 'transact',
  effects: 'transact'
})

/**
 * Transact-only (issue 10): the transact runs with `effects: 'transact-only'`: records are not
 * claimed before they run, the commit claims as it completes. Concurrent duplicates may both
 * run; one commit wins and the other replays its record: still not one duplicate effect.
 */
export const transactOnlyConfigFor = (seed: number, payments: number, endpoint: string): ChaosConfig => configFor(seed, payments, endpoint, {
  profile: 'transact-only',
  effects: 'transact-only'
})

/**
 * Stream (issue 9): a Kinesis stream instead of the queue, 1 to 3 shards, payments spread over
 * accounts as partition keys; Lambda checkpoints at the lowest failure and retries a failed
 * batch with backoff until `maxRetryAttempts`, then sends it to the on-failure destination.
 * Even seeds key by `@middy/event-normalizer` and a path into the decoded data, odd seeds by a
 * function decoding it. The queue's settings (FIFO, visibility, receive counts) do not apply:
 * streams count no deliveries, so `onFailure` always sees attempt 1 and releases.
 */
export const streamConfigFor = (seed: number, payments: number, endpoint: string): ChaosConfig => {
  const shards = 1 + (seed % 3)
  return configFor(seed, payments, endpoint, {
    profile: 'stream',
    fifo: false,
    consumers: shards + (seed % 2),
    batchSize: [10, 100, 25, 50][seed % 4] as number,
    stream: {
      shards,
      partitionKeys: 6 + 3 * (seed % 3),
      // Enough backoff (1 + 2 + … + 32 s) for a crashed owner's lease (its deadline, plus the skew allowance) to lapse.
      maxRetryAttempts: seed % 2 === 0 ? 6 : 10,
      retryBaseMs: 1000,
      retryCapMs: 60_000,
      keyBy: seed % 2 === 0 ? 'normalizer-path' : 'key-function'
    }
  })
}

/**
 * Kafka: a topic of 2 to 5 partitions instead of the queue, payments spread over accounts as
 * record keys; Lambda commits each partition just before its lowest reported offset, reads a
 * failed partition again with backoff until `maxRetryAttempts`, then sends its records to the
 * on-failure destination. Even seeds are Amazon MSK, odd seeds self-managed; the payment id is
 * found by the path `value.paymentId` (into the base64 value, or behind `@middy/event-normalizer`)
 * or by a function decoding the value. Kafka counts no deliveries: `onFailure` always sees
 * attempt 1 and releases, and nothing is ever stored FAILED.
 */
export const kafkaConfigFor = (seed: number, payments: number, endpoint: string): ChaosConfig => {
  const partitions = 2 + (seed % 4)
  return configFor(seed, payments, endpoint, {
    profile: 'kafka',
    fifo: false,
    consumers: 2 + (seed % 3),
    batchSize: [10, 100, 25, 50][seed % 4] as number,
    kafka: {
      partitions,
      partitionKeys: 3 * partitions,
      // Enough backoff (1 + 2 + … + 32 s) for a crashed owner's lease (its deadline, plus the skew allowance) to lapse.
      maxRetryAttempts: seed % 2 === 0 ? 6 : 10,
      retryBaseMs: 1000,
      retryCapMs: 60_000,
      eventSource: seed % 2 === 0 ? 'aws:kafka' : 'SelfManagedKafka',
      keyBy: (['value-path', 'key-function', 'normalizer-path'] as const)[seed % 3] as 'value-path'
    }
  })
}

/**
 * Promises: the standard runs, but the handler is hand-written and returns
 * `event.Records.map(async …)` without `Promise.allSettled`: every record's promise must be
 * awaited before its record is stored or acknowledged (a record acknowledged before its work
 * failed would be lost). Its completions wait for the whole batch, as any hand-written
 * handler's do: a crash there re-runs finished records (the batch-wide window). Standard queues
 * only: such a handler keeps no order.
 */
export const promisesConfigFor = (seed: number, payments: number, endpoint: string): ChaosConfig => configFor(seed, payments, endpoint, {
  profile: 'promises',
  handler: 'promises',
  // Such a handler runs a batch's records all at once: it keeps no FIFO order (perRecord does).
  fifo: false
})

/**
 * Redis: the standard runs on `RedisStore` (a redis-server of the run's own, a node-redis client
 * per consumer), with the same store faults, and the server killed (SIGKILL) and started again
 * 1 to 3 times while payments are sent, down 0.2 to 3 s of virtual time each. The persistence
 * setting decides what a restart keeps: nothing (`none`), the AOF fsynced every second
 * (`everysec`) or before each acknowledgement (`always`).
 */
const redisConfigFor = (persistence: RedisPersistence) => (seed: number, payments: number, endpoint: string): ChaosConfig => configFor(seed, payments, endpoint, {
  profile: `redis-${persistence}`,
  store: 'redis',
  redis: { persistence, restarts: 1 + (seed % 3) }
})

/**
 * Managed (Lambda Managed Instances): each process's one Middy stack (one middleware, its local
 * cache, one `perRecord`) serves 2 to 4 invocations at once, with contention's duplicates and
 * slow handlers so that concurrent invocations of one process meet the same keys, and time out
 * while their neighbours finish.
 */
export const managedConfigFor = (seed: number, payments: number, endpoint: string): ChaosConfig => {
  const invocationsPerProcess = 2 + (seed % 3)
  return configFor(seed, payments, endpoint, {
    profile: 'managed',
    consumers: 2 * invocationsPerProcess,
    invocationsPerProcess,
    localCacheSize: 100,
    duplicateWithinMs: 30_000,
    rates: { ...defaultRates, producerDuplicate: 0.4, slow: 0.25 }
  })
}

export const profiles = {
  standard: configFor,
  promises: promisesConfigFor,
  contention: contentionConfigFor,
  transact: transactConfigFor,
  'transact-only': transactOnlyConfigFor,
  stream: streamConfigFor,
  kafka: kafkaConfigFor,
  'redis-none': redisConfigFor('none'),
  'redis-everysec': redisConfigFor('everysec'),
  'redis-always': redisConfigFor('always'),
  managed: managedConfigFor
} as const
export type Profile = keyof typeof profiles
