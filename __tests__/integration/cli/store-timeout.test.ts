import { afterAll, afterEach, beforeAll, beforeEach, expect, jest, test } from '@jest/globals'
import { run } from '../../../src/cli/main.js'
import { blackhole } from '../../support/blackhole.js'
import { endpoint } from '../../support/dynamodb.js'

/**
 * A store endpoint that accepts the connection and never answers (an SSM tunnel whose far end
 * is down): a real TCP server on loopback that reads and says nothing. Each command gives up
 * after --timeout, exit 1, with the --json error document.
 */

const cli = async (...argv: string[]): Promise<{ code: number, out: string, err: string, ms: number }> => {
  let out = ''
  let err = ''
  const started = Date.now()
  const code = await run(argv, { out: (text) => { out += `${text}\n` }, err: (text) => { err += `${text}\n` } })
  return { code, out, err, ms: Date.now() - started }
}

const savedEnv = { ...process.env }
let hole: Awaited<ReturnType<typeof blackhole>>
beforeAll(() => { Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_ENDPOINT_URL_DYNAMODB: endpoint() }) })
afterAll(() => { process.env = { ...savedEnv } })
beforeEach(async () => { hole = await blackhole() })
afterEach(async () => { await hole.close() })

const silent = (where: RegExp): unknown => ({ error: { name: 'IdempotencyStoreError', operation: 'read', message: expect.stringMatching(where) } })

test('--redis on an endpoint that never answers: list gives up after --timeout, exit 1, the --json error', async () => {
  const result = await cli('list', '--redis', `redis://127.0.0.1:${hole.port}`, '--timeout', '0.5', '--json')
  expect(result.code).toBe(1)
  expect(JSON.parse(result.out)).toEqual(silent(new RegExp(`^no answer from Redis at redis://127\\.0\\.0\\.1:${hole.port} within 0\\.5 s`)))
  expect(result.err).toMatch(/--timeout SECONDS sets how long to wait/)
  expect(result.ms).toBeLessThan(5000)
}, 15_000)

test('--table with AWS_ENDPOINT_URL_DYNAMODB on an endpoint that never answers: list and inspect give up after --timeout, exit 1', async () => {
  process.env.AWS_ENDPOINT_URL_DYNAMODB = hole.url
  try {
    for (const command of [['list'], ['inspect', 'ns#k']]) {
      const result = await cli(...command, '--table', 'Orders', '--timeout', '0.5', '--json')
      expect(result.code).toBe(1)
      expect(JSON.parse(result.out)).toEqual(silent(/^no answer from DynamoDB \(table Orders\) within 0\.5 s/))
      expect(result.ms).toBeLessThan(5000)
    }
  } finally {
    process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint()
  }
}, 20_000)

test('without --timeout, a command gives up after the documented 10 s', async () => {
  // The 10 s on a fake clock (timers and Date; the sockets and the promise queues stay real): the
  // command must still be waiting a millisecond before them, and give up at them.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] })
  try {
    let settled = false
    const command = cli('inspect', 'ns#k', '--redis', `redis://127.0.0.1:${hole.port}`).finally(() => { settled = true })
    // The command's timer is set before it connects: once the endpoint holds what it was sent, it runs.
    await hole.unanswered()
    await jest.advanceTimersByTimeAsync(9_999)
    expect(settled).toBe(false)
    await jest.advanceTimersByTimeAsync(1)
    const result = await command
    expect(result.code).toBe(1)
    expect(result.err).toMatch(/no answer from Redis at .* within 10 s/)
    expect(result.ms).toBeGreaterThanOrEqual(10_000)
  } finally {
    jest.useRealTimers()
  }
}, 30_000)

test('--timeout that is not a positive number of seconds is a usage error', async () => {
  for (const value of ['0', 'soon', '5s']) {
    const result = await cli('list', '--redis', 'redis://127.0.0.1:1', '--timeout', value)
    expect(result.code).toBe(2)
    expect(result.err).toMatch(/--timeout takes a number of seconds greater than 0/)
  }
})
