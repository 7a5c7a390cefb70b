/**
 * The one shape RedisStore talks to, whatever client the user brings. Each client family has
 * its own adapter (one file each, beside this one) that sends a command routed by its key and
 * sends many single-key commands in one round trip per node; replies come back normalised, so
 * the store never sees a family's Buffers, bigints or nulls of its own.
 */
export interface RedisConnection {
  /** The client family, named in errors. */
  readonly family: string
  /**
   * The client talks to one server, not a cluster: a command may name keys of any slots. (A
   * single-endpoint client may still reach a cluster-mode server, which refuses that with
   * CROSSSLOT; the store then stops doing it.)
   */
  readonly oneServer: boolean
  /**
   * A read-only command it sends (`MGET`, `GET`) always reaches the primary. False where the
   * client may send one to a replica (GLIDE's `readFrom`; an ioredis Cluster's `scaleReads`),
   * or where the store cannot tell (a `{ sendCommand }` of your own): the store then reads inside
   * a script, which no client sends to a replica, at several times a bare read's server time.
   */
  readonly readsFromPrimary: boolean
  /** Sends one command about `key` (routed by it to its primary in a cluster); resolves the normalised reply. */
  send: (key: string, args: readonly string[]) => Promise<unknown>
  /**
   * Sends one command per entry, each about its own key: pipelined, one round trip per node (in
   * a cluster the keys are in different slots, so never one cross-slot command). Resolves the
   * normalised replies in order; rejects with the first error met.
   */
  sendEach: (commands: ReadonlyArray<{ key: string, args: readonly string[] }>) => Promise<unknown[]>
}

/**
 * A reply in one shape whatever the client: bulk strings as text (a client may give Buffers,
 * or Uint8Arrays), integers as numbers (a client may give bigints), nil as `null`, arrays of
 * the same.
 */
export const normalise = (reply: unknown): unknown => {
  if (reply === undefined || reply === null) return null
  if (typeof reply === 'string' || typeof reply === 'number') return reply
  if (typeof reply === 'bigint') return Number(reply)
  if (reply instanceof Uint8Array) return Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength).toString('utf8')
  if (Array.isArray(reply)) return reply.map(normalise)
  return reply
}

/**
 * Whether `error` is the server's NOSCRIPT: it does not know the script's SHA1 (after a restart,
 * a failover, a `SCRIPT FLUSH`). node-redis and ioredis keep the reply's text ("NOSCRIPT No
 * matching script"); Valkey GLIDE names its kind ("NoScriptError: No matching script").
 */
export const isNoScript = (error: unknown): boolean =>
  /\bNOSCRIPT\b|NoScriptError/.test(String((error as { message?: unknown } | null)?.message ?? error))

/** Whether `error` is a cluster's refusal of a command whose keys are in different slots. */
export const isCrossSlot = (error: unknown): boolean =>
  /\bCROSSSLOT\b/.test(String((error as { message?: unknown } | null)?.message ?? error))
