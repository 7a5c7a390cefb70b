/**
 * Starts a three-node Redis Cluster on loopback (no replicas, no persistence) for the tests of
 * RedisStore in cluster mode: three `redis-server` processes with `cluster-enabled yes`, joined
 * by `redis-cli --cluster create`, ready once every node reports `cluster_state:ok`. Not shipped.
 * `REDIS_CLUSTER_NODES=host:port,host:port,…` points the tests at a cluster already running
 * instead. Each node is killed by `stop()`, on process exit, and by its watchdog (see
 * redis-server.mjs): no orphan keeps a port.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './free-port.mjs'
import { startRedisServer } from './redis-server.mjs'

const run = promisify(execFile)

/** redis-cli (Debian's redis-tools, installed with redis-server), or valkey-cli beside a valkey-server. */
const cli = async () => {
  for (const name of ['redis-cli', 'valkey-cli']) {
    try {
      await run(name, ['--version'])
      return name
    } catch {}
  }
  throw new Error('redis-cli not found: the Redis Cluster tests form their cluster with it. ' +
    'It comes with redis-server (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), ' +
    'or set REDIS_CLUSTER_NODES=host:port,… to use a cluster you run.')
}

/** `CLUSTER INFO` of one node, as redis-cli prints it (empty when the node does not answer). */
const clusterInfo = async (binary, port) => {
  try {
    return (await run(binary, ['-h', '127.0.0.1', '-p', String(port), 'CLUSTER', 'INFO'])).stdout
  } catch {
    return ''
  }
}

/** @returns {Promise<{ nodes: string[], stop: () => Promise<void> }>} */
export const startRedisCluster = async (size = 3) => {
  // nodes.conf of each node goes to a folder of its own, removed on stop.
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'))
  const servers = []
  const stop = async () => {
    await Promise.all(servers.map(async (server) => await server.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; i < size; i++) {
      // The cluster bus port is free too: by default it is port + 10000, which may be taken or past 65535.
      servers.push(await startRedisServer([
        '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${i}.conf`, '--dir', dir,
        '--cluster-port', String(await freePort()), '--cluster-node-timeout', '5000'
      ]))
    }
    const nodes = servers.map((server) => `127.0.0.1:${server.port}`)
    const binary = await cli()
    try {
      await run(binary, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'])
    } catch (error) {
      throw new Error(`${binary} --cluster create failed: ${error.stderr || error.stdout || error.message}`)
    }
    // Ready when every node has seen the others and serves all 16384 slots.
    const deadline = Date.now() + 20_000
    for (;;) {
      const infos = await Promise.all(servers.map(async (server) => await clusterInfo(binary, server.port)))
      const formed = (info) => info.includes('cluster_state:ok') &&
        info.includes('cluster_slots_ok:16384') &&
        info.includes(`cluster_known_nodes:${size}`)
      if (infos.every(formed)) break
      if (Date.now() > deadline) {
        throw new Error(`the Redis Cluster on ${nodes.join(', ')} did not reach cluster_state:ok: ${infos.join(' | ')}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return { nodes, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
