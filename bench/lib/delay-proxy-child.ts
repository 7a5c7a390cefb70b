/**
 * A TCP proxy on loopback that gives Redis (or DynamoDB Local) a network round trip. On loopback redis-server
 * answers in microseconds, which hides how many round trips a client waits for; through this
 * proxy every chunk a client sends is held `delayMs` before it is passed on, so each round trip
 * costs about that, the same for every client, and a write that carries several commands
 * (pipelining) pays it once. Only the request direction is delayed: for request/response
 * traffic that is the same as half each way, and Node's timers have millisecond resolution, so
 * two half delays would each round up to a whole one. The actual round trip is measured by the
 * parent (PING through the proxy) and printed.
 *
 * It also counts what the clients send, on the wire, whatever the client library: commands
 * (RESP arrays, by name), writes (chunks) and round trips: the writes that came after the
 * client was given an answer since its previous write, i.e. the times it went on only after
 * waiting for the server (a pipeline of 100 commands that arrives in several chunks with no
 * answer in between is one round trip). Run by `delay-proxy.ts` in its own process, so
 * that the bench's own CPU work does not delay the forwarding. Bounded: loopback only, at most
 * MAX_CONNECTIONS, a source is paused while MAX_QUEUED_BYTES wait, and it exits when its parent
 * goes away (IPC disconnect) or after MAX_LIFETIME_MS whatever happens.
 */
import { connect, createServer, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'

// An SDK client pools up to 50 sockets; the DynamoDB section passes a bound for its clients.
const MAX_CONNECTIONS = Number(process.argv[4] ?? 64)
const MAX_QUEUED_BYTES = 16 * 1024 * 1024
const MAX_LIFETIME_MS = 30 * 60 * 1000
// A timer may fire a little early (the loop's clock is whole milliseconds): a chunk due within
// this much is sent rather than waiting another whole timer tick.
const EARLY_MS = 0.25

const targetPort = Number(process.argv[2])
const delayMs = Number(process.argv[3])
if (!Number.isInteger(targetPort) || !(delayMs >= 0) || !Number.isInteger(MAX_CONNECTIONS)) throw new Error('usage: delay-proxy-child <target port> <delay ms> [max connections]')

/** What the clients sent, since the proxy started. */
const counts = { commands: {} as Record<string, number>, writes: 0, roundTrips: 0, bytes: 0 }

/**
 * Counts the commands in a client's byte stream (RESP: `*N` then N `$len` bulk strings; an
 * inline command is one line). Keeps only an unfinished header line between chunks.
 */
const commandCounter = (): ((chunk: Buffer) => void) => {
  let pending = Buffer.alloc(0)
  let args = 0 // bulk strings still to come in the current command
  let skip = 0 // bytes of a bulk string (and its CRLF) still to skip
  let nameNext = false // the next bulk string is the command's name
  let nameLength = -1
  return (chunk) => {
    const buf = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    let i = 0
    while (i < buf.length) {
      if (skip > 0) {
        if (nameLength >= 0) {
          if (buf.length - i < nameLength) break // wait for the whole name
          const name = buf.toString('latin1', i, i + nameLength).toLowerCase()
          counts.commands[name] = (counts.commands[name] ?? 0) + 1
          nameLength = -1
        }
        const n = Math.min(skip, buf.length - i)
        i += n
        skip -= n
        continue
      }
      const eol = buf.indexOf('\r\n', i)
      if (eol < 0) break
      const line = buf.toString('latin1', i, eol)
      i = eol + 2
      if (line.startsWith('*') && args === 0) {
        args = Number(line.slice(1))
        nameNext = args > 0
      } else if (line.startsWith('$') && args > 0) {
        skip = Number(line.slice(1)) + 2
        args--
        if (nameNext) { nameLength = skip - 2; nameNext = false }
      } else if (line.trim() !== '') {
        const name = (line.trim().split(/\s+/)[0] ?? '').toLowerCase()
        counts.commands[name] = (counts.commands[name] ?? 0) + 1
      }
    }
    pending = Buffer.from(buf.subarray(i))
  }
}

/** Passes `from`'s chunks to `to`, each `delay` ms after it arrived, in order. */
const pipeDelayed = (from: Socket, to: Socket, delay: number, onChunk?: (chunk: Buffer) => void): void => {
  const queue: Array<{ due: number, chunk: Buffer }> = []
  let queued = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = (): void => {
    timer = undefined
    const now = performance.now()
    while (queue.length > 0 && (queue[0]?.due ?? 0) - now <= EARLY_MS) {
      const { chunk } = queue.shift() as { chunk: Buffer }
      queued -= chunk.length
      if (!to.destroyed) to.write(chunk)
    }
    if (queued < MAX_QUEUED_BYTES / 2 && from.isPaused()) from.resume()
    arm()
  }
  const arm = (): void => {
    const head = queue[0]
    if (head === undefined || timer !== undefined) return
    timer = setTimeout(flush, Math.max(1, head.due - performance.now()))
  }
  from.on('data', (chunk: Buffer) => {
    onChunk?.(chunk)
    if (delay === 0) { to.write(chunk); return }
    queue.push({ due: performance.now() + delay, chunk })
    queued += chunk.length
    if (queued > MAX_QUEUED_BYTES) from.pause()
    arm()
  })
  from.on('close', () => { if (timer !== undefined) clearTimeout(timer); to.end() })
}

const server = createServer((client) => {
  const redis = connect(targetPort, '127.0.0.1')
  client.setNoDelay(true)
  redis.setNoDelay(true)
  const count = commandCounter()
  let answered = true // the connection's first write starts a round trip too
  pipeDelayed(client, redis, delayMs, (chunk) => {
    counts.writes++
    if (answered) counts.roundTrips++
    answered = false
    counts.bytes += chunk.length
    count(chunk)
  })
  pipeDelayed(redis, client, 0, () => { answered = true })
  client.on('error', () => redis.destroy())
  redis.on('error', () => client.destroy())
})
// Connections beyond this are refused by Node itself.
server.maxConnections = MAX_CONNECTIONS

const exit = (): never => process.exit(0)
setTimeout(exit, MAX_LIFETIME_MS)
process.on('disconnect', exit)
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'counts') process.send?.({ type: 'counts', counts })
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.send?.({ type: 'listening', port: typeof address === 'object' && address !== null ? address.port : 0 })
})
