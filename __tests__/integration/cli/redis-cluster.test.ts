import { afterAll, beforeAll, expect, test } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { createClient, createCluster } from 'redis'
import { run } from '../../../src/cli/main.js'
import { RedisStore } from '../../../src/redis.js'
import { keySlot } from '../../../src/stores/redis/key-slot.js'
import { clusterNodes, uniquePrefix } from '../../support/redis.js'
import { keyOf } from '../../support/record-keys.js'

/**
 * The CLI pointed at one node of the real three-node Redis Cluster (as at an ElastiCache
 * configuration endpoint): it lists every primary's records and sends each key's command to the
 * node that owns it.
 */

const cli = async (...argv: string[]): Promise<{ code: number, out: string, err: string }> => {
  let out = ''
  let err = ''
  const code = await run(argv, { out: (text) => { out += `${text}\n` }, err: (text) => { err += `${text}\n` } })
  return { code, out, err }
}

const nodeUrl = (): string => `redis://${clusterNodes()[0]?.host ?? ''}:${clusterNodes()[0]?.port ?? 0}`
const keyPrefix = uniquePrefix('cli-cluster')
const NAMES = Array.from({ length: 12 }, (_, i) => keyOf('ns', `order-${i}`))
const cluster = createCluster({ rootNodes: clusterNodes().map(({ host, port }) => ({ url: `redis://${host}:${port}` })) })
beforeAll(async () => {
  await cluster.connect()
  const store = new RedisStore({ client: cluster, keyPrefix })
  const nowMs = Date.now()
  const expiry = Math.floor(nowMs / 1000) + 3600
  for (const key of NAMES) {
    const token = randomUUID()
    expect(await store.claim({ key, status: 'IN_PROGRESS', expiry, inProgressExpiry: nowMs + 600_000, leaseToken: token }, nowMs)).toBeUndefined()
    expect(await store.fail(key, token, { expiry, error: { name: 'CardDeclined', message: 'declined' } })).toBe(true)
  }
})
afterAll(async () => { await cluster.close() })

/** The keys the node at the URL does not own: a command about one sent there is answered MOVED. */
const notOnTheUrlNode = async (): Promise<string[]> => {
  const node = await createClient({ url: nodeUrl() }).connect()
  try {
    const ranges = await node.sendCommand(['CLUSTER', 'SLOTS']) as Array<[number, number, [string, number]]>
    const port = clusterNodes()[0]?.port
    return NAMES.filter((key) => {
      const slot = keySlot(keyPrefix + key)
      return ranges.find(([start, end]) => slot >= start && slot <= end)?.[2][1] !== port
    })
  } finally {
    await node.close()
  }
}

test('list --redis NODE on a cluster lists the records of every primary', async () => {
  const listed = await cli('list', '--redis', nodeUrl(), '--prefix', keyPrefix, '--json')
  expect(listed.err).toBe('')
  expect(listed.code).toBe(0)
  expect((JSON.parse(listed.out) as Array<{ key: string }>).map((v) => v.key).sort()).toEqual([...NAMES].sort())
})

test('inspect and release of keys another node owns reach that node', async () => {
  const elsewhere = await notOnTheUrlNode()
  expect(elsewhere.length).toBeGreaterThan(1)
  const [inspected, released] = elsewhere as [string, string]
  const inspect = await cli('inspect', inspected, '--redis', nodeUrl(), '--prefix', keyPrefix, '--json')
  expect(inspect.err).toBe('')
  expect(JSON.parse(inspect.out)).toMatchObject({ key: inspected, status: 'FAILED', error: { name: 'CardDeclined' } })
  const release = await cli('release', released, '--redis', nodeUrl(), '--prefix', keyPrefix, '--json')
  expect(release.err).toBe('')
  expect(JSON.parse(release.out)).toMatchObject({ key: released, released: true })
  expect(await cluster.exists(keyPrefix + released)).toBe(0)
})
