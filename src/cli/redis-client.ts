import { UsageError } from './usage-error.js'

/** `import(name)`, or undefined when the package itself is not installed (any other failure is thrown). */
export const importIfInstalled = async (name: string): Promise<any> => {
  try {
    return await import(name)
  } catch (error) {
    const { code, message = '' } = (error ?? {}) as { code?: string, message?: string }
    const notFound = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
    if (notFound && message.includes(`'${name}'`)) return undefined
    throw error
  }
}

/** A client of the server (or the cluster) at the URL: `close` quits it, `destroy` drops its sockets at once. */
export interface Connected { client: unknown, close: () => Promise<void>, destroy: () => void }

/**
 * A connected client of whichever of `redis` (node-redis) and `ioredis` is installed, that first.
 * When the server at `url` is a node of a Redis Cluster (`INFO cluster`: an ElastiCache
 * configuration endpoint, any node), a cluster client of the same package takes over, with the
 * URL's node as its seed: it finds every primary, and sends each key's commands to the node that
 * owns it. `track` is given each client as it is made, so that a caller who gives up (no answer)
 * can destroy it while it is still connecting.
 */
type Track = (destroy: () => void) => void

export const connectRedis = async (url: string, timeoutMs: number, track: Track): Promise<Connected> => {
  const nodeRedis = await importIfInstalled('redis')
  if (nodeRedis !== undefined) return await connectNodeRedis(nodeRedis, url, timeoutMs, track)
  const ioredis = await importIfInstalled('ioredis')
  if (ioredis !== undefined) return await connectIORedis(ioredis, url, timeoutMs, track)
  throw new UsageError('--redis needs a Redis client, and middy-idempotency brings none: ' +
    'install redis (node-redis) or ioredis in this project (npm install redis)')
}

const isCluster = (info: unknown): boolean => /^cluster_enabled:1\b/m.test(String(info))

const connectNodeRedis = async (nodeRedis: any, url: string, timeoutMs: number, track: Track): Promise<Connected> => {
  // No reconnecting: an operator wants the error, not a command that waits forever.
  const socket = { reconnectStrategy: false, connectTimeout: timeoutMs }
  const opened = (client: any): Connected => {
    // connect() rejects with the error; the listener keeps a later one from crashing the process.
    client.on('error', () => {})
    // v5 and v6 close and destroy; v4 quits and disconnects.
    const destroy = (): void => {
      void Promise.resolve().then(() => (client.destroy ?? client.disconnect).call(client)).catch(() => {})
    }
    track(destroy)
    return { client, close: async () => { await (client.close ?? client.quit).call(client) }, destroy }
  }
  const single = opened(nodeRedis.createClient({ url, socket }))
  await (single.client as any).connect()
  if (!isCluster(await (single.client as any).sendCommand(['INFO', 'cluster']))) return single
  await single.close()
  // The URL's credentials and TLS for every node the cluster finds, as for the seed.
  const { username, password, protocol } = new URL(url)
  const cluster = opened(nodeRedis.createCluster({
    rootNodes: [{ url }],
    defaults: {
      ...(username === '' ? {} : { username: decodeURIComponent(username) }),
      ...(password === '' ? {} : { password: decodeURIComponent(password) }),
      socket: { ...socket, ...(protocol === 'rediss:' ? { tls: true } : {}) }
    }
  }))
  await (cluster.client as any).connect()
  return cluster
}

const connectIORedis = async (ioredis: any, url: string, timeoutMs: number, track: Track): Promise<Connected> => {
  const options = { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: timeoutMs }
  const opened = (client: any): Connected => {
    client.on('error', () => {})
    const destroy = (): void => { client.disconnect() }
    track(destroy)
    return { client, close: async () => { await client.quit() }, destroy }
  }
  const Redis = ioredis.Redis ?? ioredis.default
  const single = opened(new Redis(url, options))
  await (single.client as any).connect()
  if (!isCluster(await (single.client as any).call('info', 'cluster'))) return single
  await single.close()
  const { hostname, port, username, password, protocol } = new URL(url)
  const cluster = opened(new ioredis.Cluster([{ host: hostname, port: Number(port === '' ? 6379 : port) }], {
    lazyConnect: true,
    clusterRetryStrategy: () => null,
    redisOptions: {
      ...options,
      ...(username === '' ? {} : { username: decodeURIComponent(username) }),
      ...(password === '' ? {} : { password: decodeURIComponent(password) }),
      ...(protocol === 'rediss:' ? { tls: {} } : {})
    }
  }))
  await (cluster.client as any).connect()
  return cluster
}
