import type { RedisClientLike } from './connect.js'

/* The options of RedisStore and its defaults, and the bounds it states for a batch. */

/**
 * Options of {@link RedisStore}.
 *
 * @example
 * ```ts
 * const options: RedisStoreOptions = {
 *   client: await createClient({ url: process.env.REDIS_URL }).connect(),
 *   keyPrefix: 'idem:'
 * }
 * ```
 */
export interface RedisStoreOptions {
  /**
   * A connected client, as you already have it: a node-redis (`redis`, `@redis/client` v4–v6)
   * client or cluster, an ioredis (5, 6) or iovalkey `Redis` or `Cluster`, a Valkey GLIDE 2.x
   * `GlideClient` or `GlideClusterClient`, or any `{ sendCommand(args: string[]) }`. The store
   * neither connects nor closes it. Required.
   */
  client: RedisClientLike
  /**
   * Put before every record's key (`namespace#sha256…`), for a database shared with other data.
   * No hash tag is added, so a batch's keys spread over a cluster's slots. [`''`]
   */
  keyPrefix?: string
  /**
   * The largest result a COMPLETED record keeps, in UTF-8 bytes of its JSON: Redis takes values
   * up to 512 MB, but a large one holds up every client of the server while it travels. [1 MiB]
   */
  maxResponseBytes?: number
}

export const defaults = { keyPrefix: '', maxResponseBytes: 1024 * 1024 }

export const OPTION_NAMES = ['client', 'keyPrefix', 'maxResponseBytes'] as const satisfies
  ReadonlyArray<keyof RedisStoreOptions>
// Compiles only while every option is listed: a new option cannot be refused as unknown.
const everyOptionListed: Exclude<keyof RedisStoreOptions, (typeof OPTION_NAMES)[number]> extends never
  ? true
  : never = true
void everyOptionListed

// Keys one `read` takes: on one server, one command for all (an MGET, or READ: well under the
// 8,000 values Lua's `unpack` can spread), so that a batch's redeliveries are one round trip
// even when they share it with claims (docs/architecture.md: the batch flow, claim); on a
// cluster (no cross-slot command), one command each, pipelined.
export const MAX_READ_KEYS = 1000

// Store requests a batch sends at once: one connection pipelines them all.
export const CONCURRENCY = 1000

// A key expires this long after its record stops protecting (the first millisecond after the
// `expiry` second), so that a Lambda host whose clock is a little behind the server's never
// finds a record gone that, by its clock, still protects. With the middleware's `clockSkewMs`,
// twice that more: a claim judges at its clock less `clockSkewMs`, and that clock may itself
// trail the server's by up to `clockSkewMs` (DynamoDB and MemoryStore keep the record, and
// refuse, all that time).
const EXPIRY_MARGIN_MS = 1000

/**
 * When the key of a record whose `expiry` (epoch seconds) is given expires: epoch milliseconds, as
 * `SET … PXAT` takes them.
 */
export const expireAt = (expirySeconds: number, clockSkewMs = 0): number =>
  (expirySeconds + 1) * 1000 + EXPIRY_MARGIN_MS + 2 * clockSkewMs
