/**
 * Starts `delay-proxy-child.ts` (a delaying, counting TCP proxy in front of redis-server) in
 * its own Node process and talks to it over IPC; and measures a round trip with PINGs on a
 * raw socket, so that the report can say what one round trip through the proxy actually cost.
 */
import { fork } from 'node:child_process'
import { connect } from 'node:net'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { median } from './stats.js'

/** What the clients sent through the proxy: commands by (lowercase) name, writes (chunks), round trips (writes after an answer) and bytes. */
export interface WireCounts { commands: Record<string, number>, writes: number, roundTrips: number, bytes: number }

export interface DelayProxy {
  port: number
  url: string
  /** Cumulative since the proxy started; diff two of them around a batch. */
  counts: () => Promise<WireCounts>
  stop: () => Promise<void>
}

const child = fileURLToPath(new URL('./delay-proxy-child.ts', import.meta.url))

/** `maxConnections`: the proxy refuses more (64 unless given; the commands it counts are RESP's, meaningless for HTTP). */
export const startDelayProxy = async (targetPort: number, delayMs: number, maxConnections = 64): Promise<DelayProxy> => {
  const proc = fork(child, [String(targetPort), String(delayMs), String(maxConnections)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, NODE_NO_WARNINGS: '1' }
  })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('delay proxy did not start within 20 s')), 20_000)
    proc.once('error', reject)
    proc.once('exit', (code) => reject(new Error(`delay proxy exited with ${code}`)))
    proc.on('message', (message: { type?: string, port?: number }) => {
      if (message.type === 'listening') { clearTimeout(timer); resolve(message.port as number) }
    })
  })
  // One question at a time: the bench asks between batches, never concurrently.
  const counts = async (): Promise<WireCounts> => await new Promise((resolve) => {
    const listener = (message: { type?: string, counts?: WireCounts }): void => {
      if (message.type !== 'counts') return
      proc.off('message', listener)
      resolve(structuredClone(message.counts as WireCounts))
    }
    proc.on('message', listener)
    proc.send({ type: 'counts' })
  })
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    counts,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.disconnect()
      await exited
    }
  }
}

/** `after - before`, by command name, and in writes and bytes. */
export const wireDiff = (before: WireCounts, after: WireCounts): WireCounts => ({
  commands: Object.fromEntries(Object.entries(after.commands)
    .map(([name, n]) => [name, n - (before.commands[name] ?? 0)] as const)
    .filter(([, n]) => n > 0)),
  writes: after.writes - before.writes,
  roundTrips: after.roundTrips - before.roundTrips,
  bytes: after.bytes - before.bytes
})

/** Median milliseconds of `count` sequential PINGs on a raw socket to `port` (after 10 not counted). */
export const pingRoundTripMs = async (port: number, count = 200): Promise<number> => {
  const socket = connect(port, '127.0.0.1')
  socket.setNoDelay(true)
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  const times: number[] = []
  try {
    for (let i = -10; i < count; i++) {
      const start = performance.now()
      await new Promise<void>((resolve) => { socket.once('data', () => resolve()); socket.write('PING\r\n') })
      if (i >= 0) times.push(performance.now() - start)
    }
  } finally {
    socket.destroy()
  }
  return median(times)
}
