import { normalise, type RedisConnection } from '../connection.js'

/**
 * node-redis's cluster (`createCluster`, v4–v6): its `sendCommand` takes the key that routes
 * the command first, then whether it is read-only, then the arguments.
 *
 * @example
 * ```ts
 * const cluster: NodeRedisClusterClient = await createCluster({
 *   rootNodes: [{ url: 'redis://10.0.0.1:6379' }]
 * }).connect()
 * ```
 */
export interface NodeRedisClusterClient {
  sendCommand (firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
}

/** Whether `client` is node-redis's cluster: it has its masters (v5, v6) or the v4 ways to reach them. */
export const isNodeRedisCluster = (client: Record<string, unknown>): boolean =>
  typeof client.sendCommand === 'function' &&
  (Array.isArray(client.masters) || typeof client.getMasters === 'function' || typeof client.nodeClient === 'function')

/**
 * Every command goes to the primary of its key's slot (`isReadonly: false`, even for a read:
 * a replica may lag, and a claim decision wants the latest write). A bulk read is every command
 * sent at once: the cluster hands each to its node's client, which writes the commands of one
 * tick together — one round trip per node.
 */
export const nodeRedisClusterConnection = (client: NodeRedisClusterClient): RedisConnection => {
  const send = async (key: string, args: readonly string[]): Promise<unknown> =>
    normalise(await client.sendCommand(key, false, [...args]))
  return {
    family: 'node-redis cluster',
    oneServer: false,
    readsFromPrimary: true,
    send,
    sendEach: async (commands) => await Promise.all(commands.map(async ({ key, args }) => await send(key, args)))
  }
}
