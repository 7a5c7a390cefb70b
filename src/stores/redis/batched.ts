import { Burst } from '../burst.js'
import type { ScriptName } from './scripts.js'

/** One script call waiting to be sent with the others of its burst. */
interface Call {
  name: ScriptName
  key: string
  args: readonly string[]
  resolve: (reply: unknown) => void
  reject: (error: unknown) => void
}

/** How calls are sent: many at once (the keys, and ARGV as `MANY` reads it), or one alone. */
export interface ScriptSender {
  many: (keys: readonly string[], args: readonly string[]) => Promise<unknown>
  one: (name: ScriptName, key: string, args: readonly string[]) => Promise<unknown>
  /** The server refused a command of many keys (CROSSSLOT: a cluster after all): from now on, one call a command. */
  refusesMany: (error: unknown) => boolean
}

// Calls one command carries at most: a script holds the server while it runs (about 6 us a call).
const MAX_CALLS = 100

/** Thrown for each call of a batch whose reply is not what `MANY` answers. */
export class MalformedBatchReply extends Error {}

/**
 * Sends the script calls made in one burst of work (the claims of a batch, issued together; the
 * completions of records whose work ended together) as one command of up to 100 calls (a call
 * alone as its own script). A command per call would cost the client a command, a reply and a
 * promise per record, and the server a script invocation per record. The burst (`Burst`) ends when
 * Node's current run of callbacks and promise reactions does: no call waits for a timer. Each call
 * keeps its own reply or error.
 */
export class ScriptCallBatcher {
  readonly #burst = new Burst<Call>({ maxCalls: MAX_CALLS, send: async (calls) => { await this.#send(calls) } })
  #alone = false

  constructor (private readonly send: ScriptSender) {}

  /** The reply `name` would have given about `key` alone, or its error. */
  async call (name: ScriptName, key: string, args: readonly string[]): Promise<unknown> {
    if (this.#alone) return await this.send.one(name, key, args)
    return await new Promise((resolve, reject) => { this.#burst.add({ name, key, args, resolve, reject }) })
  }

  async #send (calls: Call[]): Promise<void> {
    // A call alone (a whole event's claim) goes as its own script: nothing to share.
    if (calls.length === 1) {
      const [{ name, key, args, resolve, reject }] = calls as [Call]
      this.send.one(name, key, args).then(resolve, reject)
      return
    }
    const args: string[] = []
    for (const { name, args: own } of calls) args.push(name, String(own.length), ...own)
    let reply: unknown
    try {
      reply = await this.send.many(calls.map((c) => c.key), args)
    } catch (error) {
      // Refused before any call ran (the server checks a command's keys first): each is sent alone.
      if (this.send.refusesMany(error)) {
        this.#alone = true
        for (const call of calls) this.send.one(call.name, call.key, call.args).then(call.resolve, call.reject)
      } else {
        for (const call of calls) call.reject(error)
      }
      return
    }
    calls.forEach((call, i) => {
      const entry = Array.isArray(reply) && reply.length === calls.length ? reply[i] as unknown : undefined
      // Each entry is [1, reply] or [0, message]: one cut short says nothing of its call (a claim
      // read as written would run its work unprotected).
      if (!Array.isArray(entry) || entry.length !== 2 || (entry[0] !== 1 && entry[0] !== 0)) {
        call.reject(new MalformedBatchReply(`the batched script answered ${JSON.stringify(entry)} for this call`))
      } else if (entry[0] === 1) call.resolve(entry[1] ?? null)
      else call.reject(new Error(String(entry[1])))
    })
  }
}
