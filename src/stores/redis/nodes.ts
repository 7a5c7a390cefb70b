import { isGlide } from './clients/glide.js'
import { isIORedis } from './clients/ioredis.js'
import { isNodeRedisCluster } from './clients/node-redis-cluster.js'
import { normalise } from './connection.js'

/**
 * What the operator functions need of a user's client beyond what the store sends: each primary
 * of a cluster on its own (SCAN walks one node's keys: a cluster's are the union of its
 * primaries'), and the prefix an ioredis client puts before every key. Kept out of the client
 * adapters, which every handler bundles.
 */

/** One server a command can be sent to as it is: a cluster's primary, or the client's one server. */
export interface Node { name: string, send: (args: readonly string[]) => Promise<unknown> }

type Client = Record<string, any>

/**
 * The primaries of the cluster `client` is a client of, each reachable alone: node-redis's
 * cluster (`masters`, `nodeClient`, v4–v6), an ioredis or iovalkey `Cluster` (`nodes('master')`),
 * or a `GlideClusterClient` (the primaries of CLUSTER SLOTS, each routed to by address).
 */
export const primariesOf = async (client: unknown): Promise<Node[]> => {
  const c = client as Client
  if (isGlide(c)) return await glidePrimaries(c)
  if (isIORedis(c)) {
    return (c.nodes('master') as Client[]).map((node) => ({
      name: `${String(node.options?.host)}:${String(node.options?.port)}`,
      send: async ([command, ...args]) => normalise(await node.call(String(command).toLowerCase(), ...args))
    }))
  }
  if (isNodeRedisCluster(c)) {
    const masters = (c.masters ?? c.getMasters()) as Array<{ host: string, port: number }>
    return await Promise.all(masters.map(async (master) => {
      const node = await c.nodeClient(master)
      const send = async (args: readonly string[]): Promise<unknown> => normalise(await node.sendCommand([...args]))
      return { name: `${master.host}:${master.port}`, send }
    }))
  }
  return []
}

const glidePrimaries = async (client: Client): Promise<Node[]> => {
  // Each entry: [first slot, last slot, [host, port, id], ...replicas]; a primary serves several ranges.
  const ranges = normalise(await client.customCommand(['CLUSTER', 'SLOTS'], { route: 'randomNode' })) as unknown[][]
  const addresses = new Map<string, { host: string, port: number }>()
  for (const range of ranges) {
    const [host, port] = range[2] as [string, number]
    addresses.set(`${host}:${port}`, { host, port: Number(port) })
  }
  return [...addresses].map(([name, { host, port }]) => ({
    name,
    send: async (args) =>
      normalise(await client.customCommand([...args], { route: { type: 'routeByAddress', host, port } }))
  }))
}

/**
 * The `keyPrefix` an ioredis or iovalkey client puts before the keys of the commands it knows
 * the keys of: not before SCAN's pattern, and SCAN's replies carry it.
 * https://github.com/redis/ioredis#transparent-key-prefixing
 */
export const clientKeyPrefix = (client: unknown): string => {
  const c = client as Client
  if (!isIORedis(c)) return ''
  const prefix = c.options?.keyPrefix ?? c.options?.redisOptions?.keyPrefix
  return typeof prefix === 'string' ? prefix : ''
}
