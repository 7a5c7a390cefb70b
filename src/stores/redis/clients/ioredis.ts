import { normalise, type RedisConnection } from '../connection.js'
import { keySlot } from '../key-slot.js'

/**
 * An ioredis (5, 6) or iovalkey `Redis` or `Cluster`: `call(command, ...args)` and `pipeline()`.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis'
 * const client: IORedisClient = new Redis(process.env.REDIS_URL)
 * ```
 */
export interface IORedisClient {
  // Method syntax, so that ioredis's overloads (with and without a callback) fit.
  call (command: string, ...args: string[]): Promise<unknown>
  pipeline (): IORedisPipeline
  /** `true` on a `Cluster`. */
  isCluster?: boolean
  /** A `Cluster`'s slot map: for each of the 16384 slots, the `host:port` of its nodes, primary first. */
  slots?: unknown
  /** ioredis puts its own `keyPrefix` before every key it sends, so the slot is the prefixed key's. */
  options?: unknown
}

/** What RedisStore uses of an ioredis pipeline. */
export interface IORedisPipeline {
  call (command: string, ...args: string[]): unknown
  exec (): Promise<Array<[Error | null, unknown]> | null>
}

/**
 * Whether `client` is of the ioredis family (iovalkey is its fork): ioredis's `sendCommand` takes a
 * Command object, so this is asked first.
 */
export const isIORedis = (client: Record<string, unknown>): boolean =>
  typeof client.call === 'function' && typeof client.pipeline === 'function'

// Command names go in lower case: iovalkey finds a command's keys in its table only by its
// lower-case name, and a command whose keys it does not know gets no `keyPrefix` and, in a
// Cluster, goes to a random node (MOVED, in a pipeline). ioredis finds them in any case.
const nameOf = (command: string | undefined): string => (command as string).toLowerCase()

/** Runs `commands` as one pipeline: one write, one round trip. */
const pipelined = async (
  client: IORedisClient,
  commands: ReadonlyArray<{ args: readonly string[] }>
): Promise<unknown[]> => {
  const pipeline = client.pipeline()
  for (const { args: [command, ...args] } of commands) pipeline.call(nameOf(command), ...args)
  const results = await pipeline.exec() ?? []
  return results.map(([error, reply]) => {
    if (error !== null && error !== undefined) throw error
    return normalise(reply)
  })
}

/**
 * In a `Cluster`, the keys of a bulk read are grouped by the nodes that serve their slots (an
 * ioredis cluster pipeline must stay on one node), and each group is one pipeline; without a
 * slot map yet (not connected), by slot; the slot of a key is that of the key ioredis sends
 * (with the client's own `keyPrefix`, if it has one). Single commands go through `call`, which
 * ioredis routes by key (and redirects on MOVED/ASK).
 */
export const ioredisConnection = (client: IORedisClient): RedisConnection => {
  const send = async (_key: string, [command, ...args]: readonly string[]): Promise<unknown> =>
    normalise(await client.call(nameOf(command), ...args))
  if (client.isCluster !== true) {
    // One connection, to the server that also takes the writes.
    return {
      family: 'ioredis',
      oneServer: true,
      readsFromPrimary: true,
      send,
      sendEach: async (commands) => await pipelined(client, commands)
    }
  }
  const { keyPrefix: ownPrefix, scaleReads } = (client.options ?? {}) as { keyPrefix?: unknown, scaleReads?: unknown }
  const prefix = typeof ownPrefix === 'string' ? ownPrefix : ''
  const nodesOf = (slot: number): string => {
    const nodes = Array.isArray(client.slots) ? client.slots[slot] as unknown : undefined
    return Array.isArray(nodes) && nodes.length > 0 ? nodes.join(';') : `slot ${slot}`
  }
  return {
    family: 'ioredis cluster',
    readsFromPrimary: scaleReads === undefined || scaleReads === 'master',
    oneServer: false,
    send,
    sendEach: async (commands) => {
      const groups = new Map<string, number[]>()
      commands.forEach(({ key }, i) => {
        const group = nodesOf(keySlot(prefix + key))
        groups.set(group, [...groups.get(group) ?? [], i])
      })
      const replies: unknown[] = new Array(commands.length)
      await Promise.all([...groups.values()].map(async (indices) => {
        const answers = await pipelined(client, indices.map((i) => commands[i] as { args: readonly string[] }))
        indices.forEach((i, n) => { replies[i] = answers[n] })
      }))
      return replies
    }
  }
}
