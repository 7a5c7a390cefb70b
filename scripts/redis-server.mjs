/**
 * Starts a real Redis (Debian's `redis-server`, or `valkey-server`) on a free loopback port,
 * without persistence, for the tests. Not shipped. Plain JavaScript so that Jest's global setup
 * can load it untransformed. `REDIS_URL` points the tests at a server already running instead.
 *
 * When no server binary is found and this process runs as root (as CI does), it is installed
 * with apt-get; otherwise starting fails with a message that says how to get one: the Redis
 * tests never skip silently.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.mjs'

const onPath = (name) => {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined
  } catch {
    return undefined
  }
}

/** The server binary: on PATH, or installed from Debian's packages when this process may. */
export const redisServerBinary = () => {
  const found = onPath('redis-server') ?? onPath('valkey-server')
  if (found !== undefined) return found
  if (typeof process.getuid === 'function' && process.getuid() === 0 && onPath('apt-get') !== undefined) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env })
    execFileSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'ignore', env })
    const installed = onPath('redis-server')
    if (installed !== undefined) return installed
  }
  throw new Error('redis-server not found: the Redis tests need a real server. ' +
    'Install one (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), ' +
    'or set REDIS_URL=redis://host:port to use one you run.')
}

/** Resolves once the server answers PING on `port`. */
const answers = (port) => new Promise((resolve) => {
  const socket = connect(port, '127.0.0.1')
  socket.once('error', () => resolve(false))
  socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
  socket.once('connect', () => socket.write('PING\r\n'))
})

/** @returns {Promise<{ url: string, port: number, stop: () => Promise<void> }>} */
export const startRedisServer = async (extraArgs = []) => {
  const binary = redisServerBinary()
  const port = await freePort()
  // A directory of its own: a replica writes the RDB its primary sends it, wherever it runs.
  const dir = mkdtempSync(join(tmpdir(), 'redis-server-'))
  const server = spawn(binary, [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--save', '',
    '--appendonly', 'no',
    '--protected-mode', 'no',
    '--dir', dir,
    ...extraArgs
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  server.stderr.on('data', (chunk) => { stderr = (stderr + chunk.toString()).slice(-4000) })
  let failure
  server.once('error', (error) => { failure = new Error(`could not start ${binary}: ${error.message}`) })
  server.once('exit', (code) => { failure ??= new Error(`${binary} exited with code ${code}: ${stderr}`) })
  const kill = () => { server.kill('SIGKILL') }
  process.once('exit', kill)
  // Should this process be killed outright (no 'exit' event), a watchdog shell kills the server within a
  // second: no orphan keeps its port.
  const watch = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${server.pid} 2>/dev/null`
  const watchdog = spawn('sh', ['-c', watch], { detached: true, stdio: 'ignore' })
  watchdog.unref()
  const deadline = Date.now() + 20_000
  while (!await answers(port)) {
    if (failure !== undefined) throw failure
    if (Date.now() > deadline) { kill(); throw new Error(`${binary} did not answer on port ${port}: ${stderr}`) }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      process.removeListener('exit', kill)
      if (server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((resolve) => server.once('exit', resolve))
        kill()
        await exited
      }
      try { process.kill(watchdog.pid, 'SIGKILL') } catch {}
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
