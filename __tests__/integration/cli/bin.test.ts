import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createClient, createCluster } from 'redis'
import { idempotency, MemoryStore, perRecord, type IdempotencyStore } from '../../../src/index.js'
import { RedisStore } from '../../../src/redis.js'
import { endpoint, freshTable } from '../../support/dynamodb.js'
import { consumerProject, packPackage, removeScratch, runBin, type BinResult } from '../../support/installed-bin.js'
import { blackhole } from '../../support/blackhole.js'
import { keyOf } from '../../support/record-keys.js'
import { clusterNodes, redisUrl, uniquePrefix } from '../../support/redis.js'
import { lambdaContext } from '../../support/sqs.js'

/**
 * The operator CLI as a user runs it: the packed package installed in a project, its bin run as
 * a process, against DynamoDB Local and a real redis-server.
 */

let scratch = ''
let tarball = ''
/** A project with the AWS SDK and node-redis. */
let bin = ''
beforeAll(() => {
  ;({ tarball, scratch } = packPackage())
  bin = consumerProject(tarball, 'with-sdk', ['@aws-sdk/client-dynamodb', 'redis'])
}, 180_000)
afterAll(() => { if (scratch !== '') removeScratch(scratch) })

const HOUR = 3600

/** Seeds one record of each kind through the store's own operations; their keys. */
const seed = async (store: IdempotencyStore, namespace: string) => {
  const nowMs = Date.now()
  const nowS = Math.floor(nowMs / 1000)
  const claim = async (name: string, leaseMs: number): Promise<{ key: string, token: string }> => {
    const key = keyOf(namespace, name)
    const token = randomUUID()
    expect(await store.claim({ key, status: 'IN_PROGRESS', expiry: nowS + HOUR, inProgressExpiry: nowMs + leaseMs, leaseToken: token, payloadHash: 'ab12' }, nowMs)).toBeUndefined()
    return { key, token }
  }
  const stuck = await claim('stuck', -60_000)
  const live = await claim('live', 600_000)
  const failed = await claim('failed', 600_000)
  expect(await store.fail(failed.key, failed.token, { expiry: nowS + HOUR, error: { name: 'CardDeclined', message: 'insufficient funds' } })).toBe(true)
  const completed = await claim('completed', 600_000)
  expect(await store.complete(completed.key, completed.token, { expiry: nowS + HOUR, responseData: JSON.stringify({ charged: 500 }) })).toBe(true)
  return { stuck: stuck.key, live: live.key, failed: failed.key, completed: completed.key }
}

const json = <T>(result: BinResult): T => JSON.parse(result.stdout) as T

interface Target { flags: string[], env: Record<string, string>, store: IdempotencyStore, namespace: string, close: () => Promise<void> }

const dynamodbTarget = async (): Promise<Target> => {
  const table = await freshTable()
  return {
    flags: ['--table', table.tableName],
    // Region, credentials and the endpoint as the AWS SDK reads them from the environment.
    env: { AWS_ENDPOINT_URL_DYNAMODB: endpoint(), AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' },
    store: table.store,
    namespace: 'orders',
    close: table.drop
  }
}

const redisTarget = async (): Promise<Target> => {
  const client = await createClient({ url: redisUrl() }).connect()
  const keyPrefix = uniquePrefix('cli')
  return { flags: ['--redis', redisUrl(), '--prefix', keyPrefix], env: {}, store: new RedisStore({ client, keyPrefix }), namespace: 'orders', close: async () => { await client.close() } }
}

describe.each([['DynamoDB (--table)', dynamodbTarget], ['Redis (--redis)', redisTarget]])('middy-idempotency on %s', (_name, make) => {
  let target: Target
  let keys: Awaited<ReturnType<typeof seed>>
  beforeAll(async () => {
    target = await make()
    keys = await seed(target.store, target.namespace)
  })
  afterAll(async () => { await target.close() })
  const cli = async (...args: string[]): Promise<BinResult> => await runBin(bin, [...args, ...target.flags], target.env)

  test('list --json: every record, one JSON array; --status filters', async () => {
    const all = await cli('list', '--json')
    expect(all.code).toBe(0)
    // Not a terminal: no progress line.
    expect(all.stderr).toBe('')
    const views = json<Array<{ key: string, status: string, leaseLive?: boolean, error?: unknown, result?: string }>>(all)
    expect(views.map((v) => v.key).sort()).toEqual(Object.values(keys).sort())
    expect(views.find((v) => v.key === keys.stuck)).toMatchObject({ status: 'IN_PROGRESS', leaseLive: false })
    expect(views.find((v) => v.key === keys.live)).toMatchObject({ status: 'IN_PROGRESS', leaseLive: true })
    expect(views.find((v) => v.key === keys.failed)).toMatchObject({ status: 'FAILED', error: { name: 'CardDeclined', message: 'insufficient funds' } })
    expect(views.find((v) => v.key === keys.completed)).toMatchObject({ status: 'COMPLETED', result: '{"charged":500}' })
    const failed = json<Array<{ key: string }>>(await cli('list', '--status', 'FAILED', '--json'))
    expect(failed.map((v) => v.key)).toEqual([keys.failed])
  })

  test('list: a readable table by default', async () => {
    const result = await cli('list', '--status', 'IN_PROGRESS')
    expect(result.code).toBe(0)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^KEY\s+STATUS\s+EXPIRES\s+LEASE\s+RESULT \/ ERROR$/)
    // One line per record, in the order the store returns them: each found by its key.
    expect(lines).toHaveLength(3)
    expect(lines.find((line) => line.startsWith(keys.live))).toMatch(new RegExp(`^${keys.live}\\s+IN_PROGRESS\\s+\\S+\\s+\\S+ \\(live\\)$`))
    expect(lines.find((line) => line.startsWith(keys.stuck))).toMatch(new RegExp(`^${keys.stuck}\\s+IN_PROGRESS\\s+\\S+\\s+\\S+ \\(lapsed\\)$`))
  })

  test('inspect: status, expiry, lease, payload hash and the error; not found is exit 1', async () => {
    const text = await cli('inspect', keys.failed)
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('status:       FAILED')
    expect(text.stdout).toContain('payload hash: ab12')
    expect(text.stdout).toContain('error:        CardDeclined: insufficient funds')
    const view = json<{ status: string, leaseUntil: string, leaseLive: boolean, expiresAt: string }>(await cli('inspect', keys.live, '--json'))
    expect(view).toMatchObject({ status: 'IN_PROGRESS', leaseLive: true })
    expect(Date.parse(view.leaseUntil)).toBeGreaterThan(Date.now())
    const missing = await cli('inspect', `${target.namespace}#nothing`)
    expect(missing).toMatchObject({ code: 1, stdout: '' })
    expect(missing.stderr).toContain(`no record under ${target.namespace}#nothing`)
  })

  test('release: a live lease is refused (exit 1) and kept; --force releases it', async () => {
    const refused = await cli('release', keys.live)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('its lease is live')
    expect(json<unknown[]>(await cli('list', '--json')).map((v) => (v as { key: string }).key)).toContain(keys.live)
    const forced = await cli('release', keys.live, '--force', '--json')
    expect(forced.code).toBe(0)
    expect(json(forced)).toMatchObject({ key: keys.live, released: true, record: { status: 'IN_PROGRESS', leaseLive: true } })
    expect((await cli('inspect', keys.live)).code).toBe(1)
  })

  test('release: a stuck IN_PROGRESS record (lapsed lease) is removed, and the output says what was', async () => {
    const result = await cli('release', keys.stuck)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^released ${keys.stuck}: removed its IN_PROGRESS record \\(lease \\S+ \\(lapsed\\)\\)`))
    expect((await cli('inspect', keys.stuck)).code).toBe(1)
  })

  test('release: a FAILED record is removed, and the next claim of its key runs', async () => {
    const result = await cli('release', keys.failed)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('removed its FAILED record (error CardDeclined: insufficient funds)')
    const nowMs = Date.now()
    expect(await target.store.claim({ key: keys.failed, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + HOUR, inProgressExpiry: nowMs + 1000, leaseToken: randomUUID() }, nowMs)).toBeUndefined()
  })

  test('release: a COMPLETED record is never released, even with --force; an unknown key is exit 1', async () => {
    const result = await cli('release', keys.completed, '--force')
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('the record is COMPLETED')
    expect((await cli('inspect', keys.completed)).code).toBe(0)
    const missing = await cli('release', `${target.namespace}#nothing`, '--json')
    expect(missing.code).toBe(1)
    expect(json(missing)).toEqual({ key: `${target.namespace}#nothing`, released: false, reason: 'not-found' })
  })
})

describe('usage', () => {
  test('--help on every command, exit 0', async () => {
    for (const command of [[], ['list'], ['inspect'], ['release'], ['key']]) {
      const result = await runBin(bin, [...command, '--help'])
      expect(result).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout).toMatch(/^Usage: middy-idempotency/)
    }
  })

  test('--version prints the installed package\'s version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
    expect(await runBin(bin, ['--version'])).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' })
  })

  test.each([
    [['list'], /name the store: --table NAME \(DynamoDB\) or --redis URL/],
    [['list', '--table', 't', '--redis', 'redis://localhost'], /one of them/],
    [['list', '--table', 't', '--status', 'DONE'], /--status is one of IN_PROGRESS, COMPLETED, FAILED/],
    [['inspect', '--table', 't'], /takes one KEY/],
    [['release', 'k', '--table', 't', '--frce'], /^middy-idempotency release: unknown option --frce \(did you mean --force\?\)\n/],
    [['lst', '--table', 't'], /^middy-idempotency: unknown command "lst" \(did you mean "list"\?\)\n/],
    [['purge'], /unknown command "purge"/],
    [['key'], /--event FILE is required/],
    [['list', '--redis', 'localhost:6379'], /--redis takes a URL such as redis:\/\/localhost:6379/]
  ])('%j is a usage error: exit 2 and what was wrong', async (args, message) => {
    const result = await runBin(bin, args)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
  })
})

describe('Redis clients', () => {
  test('with ioredis and no AWS SDK installed, a Redis command works: it loads no AWS SDK', async () => {
    const other = consumerProject(tarball, 'ioredis-only', ['ioredis'])
    const client = await createClient({ url: redisUrl() }).connect()
    const keyPrefix = uniquePrefix('cli-ioredis')
    try {
      const keys = await seed(new RedisStore({ client, keyPrefix }), 'orders')
      const result = await runBin(other, ['release', keys.failed, '--redis', redisUrl(), '--prefix', keyPrefix])
      expect(result.stderr).toBe('')
      expect(result.code).toBe(0)
      expect(await client.exists(`${keyPrefix}${keys.failed}`)).toBe(0)
    } finally {
      await client.close()
    }
  })

  test('with @aws-lite/client installed and no AWS SDK, --table works over it (region, keys and endpoint from the environment)', async () => {
    const lite = consumerProject(tarball, 'aws-lite-only', ['@aws-lite/client', 'aws4'])
    const target = await dynamodbTarget()
    try {
      const keys = await seed(target.store, target.namespace)
      const listed = await runBin(lite, ['list', '--json', ...target.flags], target.env)
      expect(listed.stderr).toBe('')
      expect(JSON.parse(listed.stdout).map((v: { key: string }) => v.key).sort()).toEqual(Object.values(keys).sort())
      const released = await runBin(lite, ['release', keys.failed, ...target.flags], target.env)
      expect(released).toMatchObject({ code: 0, stderr: '' })
    } finally {
      await target.close()
    }
  })

  test('with no AWS SDK installed, --table says what to install (exit 2)', async () => {
    const bare = consumerProject(tarball, 'no-aws-sdk', [])
    for (const command of [['list'], ['create-table']]) {
      const result = await runBin(bare, [...command, '--table', 'IdempotencyStore'])
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('--table needs the AWS SDK for DynamoDB or @aws-lite/client, and middy-idempotency brings neither: install @aws-sdk/client-dynamodb in this project')
    }
  })

  test('with ioredis only, on a node of a Redis Cluster: list sees every primary, release reaches the key\'s node', async () => {
    const other = consumerProject(tarball, 'ioredis-cluster', ['ioredis'])
    const cluster = createCluster({ rootNodes: clusterNodes().map(({ host, port }) => ({ url: `redis://${host}:${port}` })) })
    await cluster.connect()
    const keyPrefix = uniquePrefix('cli-ioredis-cluster')
    const [first] = clusterNodes()
    const flags = ['--redis', `redis://${first?.host ?? ''}:${first?.port ?? 0}`, '--prefix', keyPrefix]
    try {
      const keys = await seed(new RedisStore({ client: cluster, keyPrefix }), 'orders')
      const listed = await runBin(other, ['list', '--json', ...flags])
      expect(listed.stderr).toBe('')
      expect(json<Array<{ key: string }>>(listed).map((v) => v.key).sort()).toEqual(Object.values(keys).sort())
      const released = await runBin(other, ['release', keys.failed, ...flags])
      expect(released).toMatchObject({ code: 0, stderr: '' })
      expect(await cluster.exists(`${keyPrefix}${keys.failed}`)).toBe(0)
    } finally {
      await cluster.close()
    }
  })

  test('an endpoint that accepts the connection and never answers: the process exits 1 after --timeout, with the --json error', async () => {
    const hole = await blackhole()
    try {
      const started = Date.now()
      const result = await runBin(bin, ['inspect', 'orders#k', '--redis', `redis://127.0.0.1:${hole.port}`, '--timeout', '0.5', '--json'])
      expect(result.code).toBe(1)
      expect(json(result)).toEqual({ error: { name: 'IdempotencyStoreError', operation: 'read', message: expect.stringMatching(/^no answer from Redis at .* within 0\.5 s/) } })
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      await hole.close()
    }
  }, 30_000)

  test('with no Redis client installed, --redis says what to install (exit 2)', async () => {
    const bare = consumerProject(tarball, 'no-redis-client', [])
    const result = await runBin(bare, ['list', '--redis', redisUrl()])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--redis needs a Redis client, and middy-idempotency brings none: install redis (node-redis) or ioredis')
  })
})

describe('key', () => {
  test('prints the key the middleware stores each record of an SQS batch under', async () => {
    const event = {
      Records: ['m-1', 'm-2'].map((messageId) => ({
        messageId, body: JSON.stringify({ orderId: `o-${messageId}` }), eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders',
        attributes: { ApproximateReceiveCount: '1' }, receiptHandle: 'r', md5OfBody: '', messageAttributes: {}, awsRegion: 'us-east-1'
      }))
    }
    const file = join(scratch, 'sqs-event.json')
    writeFileSync(file, JSON.stringify(event))
    const store = new MemoryStore()
    await middy().use(idempotency({ store, namespace: 'orders-consumer', logger: false })).handler(perRecord(async () => 'ok'))(event, lambdaContext())
    const stored = store.records().map((r) => r.key)

    const result = await runBin(bin, ['key', '--event', file, '--namespace', 'orders-consumer', '--json'])
    expect(result.code).toBe(0)
    const printed = json<{ source: string, records: Array<{ id: string, key: string }> }>(result)
    expect(printed.source).toBe('aws:sqs')
    expect(printed.records.map((r) => r.id)).toEqual(['m-1', 'm-2'])
    expect(printed.records.map((r) => r.key).sort()).toEqual(stored.sort())

    // One record alone gives its own key; the table names the record.
    const one = join(scratch, 'sqs-record.json')
    writeFileSync(one, JSON.stringify(event.Records[1]))
    const text = await runBin(bin, ['key', '--event', one, '--namespace', 'orders-consumer'])
    expect(text.stdout.trimEnd().split('\n')).toEqual(['RECORD  KEY', `m-2     ${printed.records[1]?.key ?? ''}`])
  })

  test('--key PATH: as the middleware with that key option; a record without one is named, exit 1', async () => {
    const event = { Records: [{ messageId: 'a', body: '{"orderId":"o-7"}', eventSource: 'aws:sqs' }, { messageId: 'b', body: '{}', eventSource: 'aws:sqs' }] }
    const file = join(scratch, 'sqs-keyed.json')
    writeFileSync(file, JSON.stringify(event))
    const store = new MemoryStore()
    await middy().use(idempotency({ store, namespace: 'ns', key: 'body.orderId', logger: false })).handler(perRecord(async () => 'ok'))(event, lambdaContext())
    const result = await runBin(bin, ['key', '--event', file, '--namespace', 'ns', '--key', 'body.orderId', '--json'])
    expect(result.code).toBe(1)
    expect(json(result)).toEqual({ source: 'aws:sqs', records: [{ id: 'a', key: store.records()[0]?.key }, { id: 'b', error: expect.stringContaining('key path "body.orderId" found nothing') }] })
  })

  test('a whole event: its one key, as the middleware computes it', async () => {
    const event = { source: 'billing', 'detail-type': 'Charge', detail: { orderId: 'o-9' } }
    const file = join(scratch, 'eventbridge.json')
    writeFileSync(file, JSON.stringify(event))
    const store = new MemoryStore()
    await middy().use(idempotency({ store, namespace: 'ns', logger: false })).handler(async () => 'ok')(event, lambdaContext())
    const result = await runBin(bin, ['key', '--event', file, '--namespace', 'ns'])
    expect(result).toMatchObject({ code: 0, stdout: `${store.records()[0]?.key ?? ''}\n` })
  })
})
