import { IdempotencyConfigError } from '../../errors.js'

/**
 * What RedisStore needs of a client: send one command (`['HGETALL', key]`), routed by its key
 * in a cluster. Each client family says it its own way; this is the one shape the store talks
 * to, so the package depends on none of them.
 */
export interface RedisCommandSender {
  send: (args: string[], key?: string) => Promise<unknown>
}

/**
 * The clients RedisStore takes, as users already have them: node-redis (`redis`,
 * `@redis/client` v4–v6) client or cluster, ioredis or iovalkey (`Redis` or `Cluster`), Valkey
 * GLIDE (`GlideClient`, `GlideClusterClient`), or anything with `sendCommand(args)`.
 *
 * @example
 * ```ts
 * const client: RedisClientLike = { sendCommand: async (args) => await myConnection.command(args) }
 * ```
 */
export type RedisClientLike =
  | { sendCommand: (args: string[]) => Promise<unknown> }
  | { call: (command: string, ...args: string[]) => Promise<unknown>, pipeline: () => unknown }
  | { customCommand: (args: string[], options?: unknown) => Promise<unknown> }
  | { sendCommand: (firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]) => Promise<unknown> }

type AnyClient = Record<string, unknown> & {
  call?: (command: string, ...args: string[]) => Promise<unknown>
  sendCommand?: (...args: unknown[]) => Promise<unknown>
  customCommand?: (args: string[], options?: unknown) => Promise<unknown>
}

/** A reply in one shape whatever the client: Buffers as text, arrays and nil as they are. */
export const normalise = (reply: unknown): unknown => {
  if (Buffer.isBuffer(reply) || reply instanceof Uint8Array) return Buffer.from(reply).toString('utf8')
  if (Array.isArray(reply)) return reply.map(normalise)
  return reply
}

/**
 * The family of `client`, recognised first by what only it has: ioredis's `call` and
 * `pipeline`; GLIDE's `customCommand`; node-redis's cluster, whose `sendCommand` takes the
 * key first (`(firstKey, isReadonly, args)`); then any `sendCommand(args)` (node-redis's client).
 */
export const senderFor = (client: unknown): RedisCommandSender => {
  if (client === null || typeof client !== 'object') throw new IdempotencyConfigError('RedisStore: client is required (a node-redis, ioredis, iovalkey or Valkey GLIDE client, or { sendCommand(args) })')
  const c = client as AnyClient
  if (typeof c.call === 'function' && typeof c.pipeline === 'function') {
    const call = c.call.bind(client)
    return { send: async ([command, ...args]) => normalise(await call(command as string, ...args)) }
  }
  if (typeof c.customCommand === 'function') {
    const custom = c.customCommand.bind(client)
    // GLIDE routes a command by its key itself; strings come back as strings with decoder 'String'.
    return { send: async (args) => normalise(await custom(args)) }
  }
  if (typeof c.sendCommand === 'function') {
    const send = c.sendCommand.bind(client)
    const isCluster = Array.isArray(c.masters) || typeof c.getSlotRandomNode === 'function' || typeof c.getMasters === 'function'
    return isCluster
      ? { send: async (args, key) => normalise(await send(key, false, args)) }
      : { send: async (args) => normalise(await send(args)) }
  }
  throw new IdempotencyConfigError('RedisStore: client is not one RedisStore knows: give a node-redis, ioredis, iovalkey or Valkey GLIDE client, or an object with sendCommand(args: string[]) => Promise<reply>')
}
