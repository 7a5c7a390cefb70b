import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from 'redis'
import { redisServerBinary, startRedisServer } from '../../scripts/redis-server.mjs'
import type { IdempotencyStore } from '../../src/index.js'
import { RedisStore } from '../../src/redis.js'
import { recordOf } from '../../src/stores/redis/record.js'
import type { IdempotencyRecord } from '../../src/stores/store.js'
import type { StoreConnection } from './consumer.js'
import type { ScheduledFaults } from './lambda-loop.js'
import { streamFor } from './prng.js'

/**
 * The Redis side of a chaos run: one redis-server of its own, with one of three persistence
 * settings, killed and started again at seeded virtual times; a node-redis client per consumer.
 *
 * - `none`: no RDB, no AOF: a restart starts empty (it forgets every claim and completion);
 * - `everysec`: AOF, fsync once a second;
 * - `always`: AOF, fsync before each write is acknowledged.
 *
 * A restart is a crash: SIGKILL, then the same binary on the same port with the same `--dir`, so
 * that the AOF, if any, is loaded again. A process crash leaves the kernel's page cache alone:
 * what the server had written to its AOF survives it whether or not it was fsynced. A crash of
 * the machine (power, kernel), which also loses what was not fsynced, is not simulated.
 */
export type RedisPersistence = 'none' | 'everysec' | 'always'

export interface RedisSettings {
  persistence: RedisPersistence
  /** How many times the server is killed and started again during the run. */
  restarts: number
}

/** The redis-server arguments of each persistence setting (RDB snapshots are off in all three). */
export const persistenceArgs = (persistence: RedisPersistence, dir: string): string[] => persistence === 'none'
  ? ['--save', '', '--appendonly', 'no', '--dir', dir]
  : ['--save', '', '--appendonly', 'yes', '--appendfsync', persistence, '--dir', dir]

/** What a record was, as far as the audit cares: its status and the lease token it was written under. */
export interface RecordState { status: string, token?: string }

/** One restart, and what the server remembered of it. */
export interface Restart {
  /** Virtual times the server went down (killed) and came back. */
  downAt: number
  upAt: number
  /** Records whose state before the kill differs after the restart (absent, or another state), by stored key. */
  changed: Map<string, { before?: RecordState, after?: RecordState }>
  /**
   * The server's AOF buffer at the kill (`INFO persistence`, `aof_buffer_length`): bytes of
   * acknowledged writes not yet written to the file. With `everysec`, Redis postpones that write
   * (up to 2 s) while a background fsync is still running, and answers the clients meanwhile:
   * what the kill takes with it. 0 without AOF.
   */
  aofUnwrittenBytes: number
}

const KEY_PREFIX = 'chaos:'
/** Bounds every wait on a process or a connection: a run never hangs on a server that does not come. */
const WAIT_MS = 20_000

const within = async <T>(promise: Promise<T>, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`chaos: ${what} within ${WAIT_MS} ms`)) }, WAIT_MS) })])
  } finally {
    clearTimeout(timer)
  }
}

/** The first start is the project's `startRedisServer`; a restart must keep its port, so it spawns the same binary itself. */
const respawn = async (port: number, args: string[]): Promise<{ stop: () => Promise<void> }> => {
  const binary = redisServerBinary()
  const server: ChildProcess = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'no', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  const kill = (): void => { server.kill('SIGKILL') }
  process.once('exit', kill)
  let output = ''
  const ready = new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-4000)
      // redis-server says so once it has loaded its AOF and listens.
      if (output.includes('Ready to accept connections')) resolve()
    }
    server.stdout?.on('data', read)
    server.stderr?.on('data', read)
    server.once('error', reject)
    server.once('exit', (code) => { reject(new Error(`${binary} exited with code ${code} on restart: ${output}`)) })
  })
  try {
    await within(ready, `redis-server to start again on port ${port}`)
  } catch (error) {
    kill()
    throw error
  }
  server.stdout?.removeAllListeners('data')
  server.stderr?.removeAllListeners('data')
  server.stdout?.resume()
  server.stderr?.resume()
  return {
    stop: async () => {
      process.removeListener('exit', kill)
      if (server.exitCode !== null || server.signalCode !== null) return
      const exited = new Promise((resolve) => server.once('exit', resolve))
      kill()
      await exited
    }
  }
}

/** A node-redis client as a Lambda environment keeps one; while the server is down its commands fail at once. */
const newClient = (url: string) => createClient({
  url,
  // A command sent while the connection is down fails (a store fault the lifecycle handles)
  // instead of waiting in the client for a server the scheduler brings back only later.
  disableOfflineQueue: true,
  // Loopback: try again soon, not after node-redis's growing backoff (real time, not virtual).
  socket: { reconnectStrategy: () => 20 }
})
type Client = ReturnType<typeof newClient>

const connect = async (url: string): Promise<Client> => {
  const client = newClient(url)
  // Each lost connection is reported as an error, then retried; the commands it fails tell the store.
  client.on('error', () => {})
  await client.connect()
  return client
}

const notReady = async (client: Client): Promise<void> => {
  if (!client.isReady) return
  await new Promise<void>((resolve) => client.once('reconnecting', () => { resolve() }))
}

const ready = async (client: Client): Promise<void> => {
  if (client.isReady) return
  await new Promise<void>((resolve) => client.once('ready', () => { resolve() }))
}

export class RedisSite {
  readonly settings: RedisSettings
  readonly restarts: Restart[] = []
  /** Store requests that failed because the server was down (refused before anything was applied). */
  outageRefusals = 0
  readonly #port: number
  readonly #url: string
  readonly #dir: string
  readonly #args: string[]
  #server: { stop: () => Promise<void> }
  readonly #admin: Client
  readonly #clients: Client[] = []
  #down = false

  private constructor (settings: RedisSettings, server: { url: string, port: number, stop: () => Promise<void> }, dir: string, args: string[], admin: Client) {
    this.settings = settings
    this.#server = server
    this.#port = server.port
    this.#url = server.url
    this.#dir = dir
    this.#args = args
    this.#admin = admin
  }

  static async start (settings: RedisSettings): Promise<RedisSite> {
    const dir = mkdtempSync(join(tmpdir(), `chaos-redis-${settings.persistence}-`))
    const args = persistenceArgs(settings.persistence, dir)
    const server = await startRedisServer(args)
    try {
      return new RedisSite(settings, server, dir, args, await connect(server.url))
    } catch (error) {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
      throw error
    }
  }

  /** A consumer's own client and a RedisStore on it (a new store at each cold start, on the same client). */
  async connection (): Promise<StoreConnection> {
    const client = await connect(this.#url)
    this.#clients.push(client)
    return {
      store: () => this.#counted(new RedisStore({ client, keyPrefix: KEY_PREFIX })),
      close: async () => { client.destroy() }
    }
  }

  /**
   * The run's restarts, from the seed: each at a random virtual time in `[from, to]` (while
   * payments are being sent, so that producer duplicates and redeliveries come after it), down
   * for 0.2 to 3 s of virtual time, never overlapping.
   */
  schedule (seed: number, from: number, to: number): ScheduledFaults {
    const plan = streamFor(seed, 'redis-restart')
    const downs = Array.from({ length: this.settings.restarts }, () => plan.int(from, Math.max(from, to))).sort((a, b) => a - b)
    const events: Array<{ at: number, kind: 'down' | 'up' }> = []
    let upTo = -Infinity
    for (const wanted of downs) {
      const downAt = Math.max(wanted, upTo + 1)
      upTo = downAt + plan.int(200, 3000)
      events.push({ at: downAt, kind: 'down' }, { at: upTo, kind: 'up' })
    }
    let current: { downAt: number, before: Map<string, RecordState>, aofUnwrittenBytes: number } | undefined
    return {
      nextAt: () => events[0]?.at ?? Infinity,
      runDue: async (now) => {
        // One event a round: when time jumped past a whole outage (a request that hung), the
        // invocations of the round in between still meet the server down.
        if (events.length > 0 && (events[0]?.at ?? Infinity) <= now) {
          const event = events.shift() as (typeof events)[number]
          if (event.kind === 'down') {
            current = { downAt: event.at, before: await this.#snapshot(), aofUnwrittenBytes: await this.#aofBuffer() }
            await this.#kill()
          } else {
            await this.#restart()
            const after = await this.#snapshot()
            this.restarts.push({ downAt: current?.downAt ?? event.at, upAt: event.at, changed: diff(current?.before ?? new Map(), after), aofUnwrittenBytes: current?.aofUnwrittenBytes ?? 0 })
            current = undefined
          }
        }
      },
      // The run ended with the server down (the source drained during the outage): it comes back for the audit.
      finish: async (now) => {
        events.length = 0
        if (this.#down) {
          await this.#restart()
          const after = await this.#snapshot()
          this.restarts.push({ downAt: current?.downAt ?? now, upAt: now, changed: diff(current?.before ?? new Map(), after), aofUnwrittenBytes: current?.aofUnwrittenBytes ?? 0 })
        }
      }
    }
  }

  /** Every record on the server, in the shape the audit reads (DynamoDB's attribute names). */
  async items (): Promise<Array<Record<string, unknown>>> {
    const items: Array<Record<string, unknown>> = []
    for (const [key, record] of await this.#records()) {
      items.push({ idempotencyKey: key, status: record.status, leaseToken: record.leaseToken, ...(record.inProgressExpiry === undefined ? {} : { inProgressExpiry: record.inProgressExpiry }) })
    }
    return items
  }

  async stop (): Promise<void> {
    for (const client of [this.#admin, ...this.#clients]) client.destroy()
    await this.#server.stop()
    rmSync(this.#dir, { recursive: true, force: true })
  }

  async #kill (): Promise<void> {
    // Nothing of any invocation is under way here (the scheduler runs between events): the kill
    // lands between two requests, and the clients learn of it before the next one is sent.
    const noticed = [this.#admin, ...this.#clients].map(notReady)
    await this.#server.stop()
    this.#down = true
    await within(Promise.all(noticed), 'the clients to see the server go')
  }

  async #restart (): Promise<void> {
    this.#server = await respawn(this.#port, this.#args)
    this.#down = false
    await within(Promise.all([this.#admin, ...this.#clients].map(ready)), 'the clients to reconnect')
  }

  async #records (): Promise<Map<string, IdempotencyRecord>> {
    const records = new Map<string, IdempotencyRecord>()
    for await (const keys of this.#admin.scanIterator({ MATCH: `${KEY_PREFIX}*`, COUNT: 1000 })) {
      const values = keys.length === 0 ? [] : await this.#admin.mGet(keys)
      keys.forEach((redisKey, i) => {
        const key = redisKey.slice(KEY_PREFIX.length)
        const record = recordOf(key, values[i] ?? null)
        if (typeof record === 'string') throw new Error(`the chaos server holds ${redisKey}, not a record: ${record}`)
        if (record !== undefined) records.set(key, record)
      })
    }
    return records
  }

  async #aofBuffer (): Promise<number> {
    const info = await this.#admin.info('persistence')
    return Number(/aof_buffer_length:(\d+)/.exec(info)?.[1] ?? 0)
  }

  async #snapshot (): Promise<Map<string, RecordState>> {
    return new Map([...await this.#records()].map(([key, r]) => [key, { status: r.status, ...(r.leaseToken === undefined ? {} : { token: r.leaseToken }) }]))
  }

  /** The store, counting the requests that failed because the server was down. */
  #counted (store: RedisStore): IdempotencyStore {
    const counting = <A extends unknown[], T>(call: (...args: A) => Promise<T>) => async (...args: A): Promise<T> => {
      const down = this.#down
      try {
        return await call(...args)
      } catch (error) {
        if (down) this.outageRefusals++
        throw error
      }
    }
    return {
      limits: store.limits,
      claim: counting(store.claim.bind(store)),
      complete: counting(store.complete.bind(store)),
      fail: counting(store.fail.bind(store)),
      release: counting(store.release.bind(store)),
      read: counting(store.read.bind(store))
    }
  }
}

const same = (a: RecordState | undefined, b: RecordState | undefined): boolean => a?.status === b?.status && a?.token === b?.token

/** Records whose state a restart did not keep: gone, changed, or back when they had been deleted. */
const diff = (before: Map<string, RecordState>, after: Map<string, RecordState>): Restart['changed'] => {
  const changed: Restart['changed'] = new Map()
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const b = before.get(key)
    const a = after.get(key)
    if (!same(b, a)) changed.set(key, { ...(b === undefined ? {} : { before: b }), ...(a === undefined ? {} : { after: a }) })
  }
  return changed
}
