import { normalise, type RedisConnection } from '../connection.js'

/**
 * A Valkey GLIDE (`@valkey/valkey-glide` 2.x) `GlideClient` or `GlideClusterClient`.
 *
 * @example
 * ```ts
 * import { GlideClusterClient } from '@valkey/valkey-glide'
 * const client: GlideClientLike = await GlideClusterClient.createClient({
 *   addresses: [{ host: 'clustercfg.my-cache.example', port: 6379 }],
 *   useTLS: true
 * })
 * ```
 */
export interface GlideClientLike {
  // Method syntax: GlideClient's options (a decoder) and GlideClusterClient's (a route too) both fit.
  customCommand (args: string[], options?: object): Promise<unknown>
}

/** Whether `client` is a GLIDE client: `customCommand` is its way to send any command. */
export const isGlide = (client: Record<string, unknown>): boolean => typeof client.customCommand === 'function'

/** Whether `client` is a `GlideClusterClient`: only it calls a function with a route. */
const isGlideCluster = (client: GlideClientLike): boolean =>
  typeof (client as unknown as Record<string, unknown>).fcallWithRoute === 'function'

/**
 * In a cluster, every command names its route: the primary of its key's slot (GLIDE's own
 * routing of a custom command is not documented for every command, and a replica may lag). A
 * bulk read is every command sent at once: GLIDE multiplexes them on its connection to each
 * node without waiting between them (its `Batch` classes would need the package imported, and
 * RedisStore depends on no client).
 */
export const glideConnection = (client: GlideClientLike): RedisConnection => {
  const cluster = isGlideCluster(client)
  const send = async (key: string, args: readonly string[]): Promise<unknown> =>
    normalise(await (cluster
      ? client.customCommand([...args], { route: { type: 'primarySlotKey', key } })
      : client.customCommand([...args])))
  return {
    family: cluster ? 'Valkey GLIDE cluster client' : 'Valkey GLIDE client',
    oneServer: !cluster,
    // The cluster client routes each command to its key's primary; the standalone client sends a
    // read-only command wherever its readFrom says, which the store cannot see.
    readsFromPrimary: cluster,
    send,
    sendEach: async (commands) => await Promise.all(commands.map(async ({ key, args }) => await send(key, args)))
  }
}
