/**
 * Type tests, compiled by `npm run typecheck` (never run): every client family RedisStore takes
 * is accepted as users create it, with no cast.
 */
import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide'
import { Cluster, Redis } from 'ioredis'
import { createClient, createCluster } from 'redis'
import { RedisStore } from '../../src/redis.js'

export const stores = async (): Promise<RedisStore[]> => [
  new RedisStore({ client: await createClient({ url: 'redis://localhost:6379' }).connect() }),
  new RedisStore({ client: await createClient({ RESP: 3 }).connect() }),
  new RedisStore({ client: await createCluster({ rootNodes: [{ url: 'redis://localhost:7000' }] }).connect() }),
  new RedisStore({ client: new Redis('redis://localhost:6379') }),
  new RedisStore({ client: new Cluster([{ host: 'localhost', port: 7000 }]) }),
  new RedisStore({ client: await GlideClient.createClient({ addresses: [{ host: 'localhost' }] }) }),
  new RedisStore({ client: await GlideClusterClient.createClient({ addresses: [{ host: 'localhost' }] }) }),
  new RedisStore({ client: { sendCommand: async (args: string[]) => args.length }, keyPrefix: 'idem:' })
]
