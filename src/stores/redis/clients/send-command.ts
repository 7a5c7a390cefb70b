import { normalise, type RedisConnection } from '../connection.js'

/**
 * A client with node-redis's `sendCommand(args)`: a node-redis (`redis`, `@redis/client` v4–v6)
 * client, or anything of that shape the user wraps.
 *
 * @example
 * ```ts
 * const client: SendCommandClient = { sendCommand: async (args) => await connection.command(args) }
 * ```
 */
export interface SendCommandClient {
  sendCommand (args: string[]): Promise<unknown>
}

/**
 * node-redis's client, or any `{ sendCommand(args) }`. A bulk read is every command sent at
 * once: node-redis writes the commands issued in one tick together (one round trip), and a
 * plain `sendCommand` of the user's gets them without waiting between them.
 */
export const sendCommandConnection = (
  client: SendCommandClient,
  family = 'node-redis client (or { sendCommand(args) })'
): RedisConnection => {
  const send = async (_key: string, args: readonly string[]): Promise<unknown> =>
    normalise(await client.sendCommand([...args]))
  return {
    family,
    oneServer: true,
    readsFromPrimary: isNodeRedisClient(client),
    send,
    sendEach: async (commands) => await Promise.all(commands.map(async ({ key, args }) => await send(key, args)))
  }
}

/**
 * node-redis's own client (v4–v6: `duplicate()` and the `isOpen` flag), one connection to the
 * server that also takes the writes. Anything else with a `sendCommand` may route a read
 * elsewhere, for all the store can tell.
 */
const isNodeRedisClient = (client: SendCommandClient): boolean => {
  const c = client as unknown as Record<string, unknown>
  return typeof c.duplicate === 'function' && typeof c.isOpen === 'boolean'
}
