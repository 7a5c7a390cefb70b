import { afterEach, beforeEach, describe, expect, test } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { dynamodbTarget, redisTarget, runCli, useLocalAwsEnvironment, type CliTarget } from '../../support/cli.js'
import { keyOf } from '../../support/record-keys.js'

/**
 * `release KEY --completed`: the one way to remove a COMPLETED record, so that its work runs
 * again. Confirmed (a y/N question on a terminal, --yes in a script) and fenced: it deletes only
 * the COMPLETED record that was shown, never one that replaced it meanwhile.
 */

const cli = runCli
useLocalAwsEnvironment()
const dynamodb = dynamodbTarget
const redis = async (): Promise<CliTarget> => await redisTarget('cli-completed')

const HOUR = 3600

describe.each([['DynamoDB (--table)', dynamodb], ['Redis (--redis)', redis]])('release --completed on %s', (_name, make) => {
  let target: CliTarget
  beforeEach(async () => { target = await make() })
  afterEach(async () => { await target.close() })

  /** A record claimed and settled through the store's own operations. */
  const settled = async (name: string, how: 'COMPLETED' | 'FAILED', expiresInS = HOUR): Promise<string> => {
    const key = keyOf('orders', name)
    const nowMs = Date.now()
    const token = randomUUID()
    expect(await target.store.claim({ key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + HOUR, inProgressExpiry: nowMs + 60_000, leaseToken: token }, nowMs)).toBeUndefined()
    const expiry = Math.floor(nowMs / 1000) + expiresInS
    const done = how === 'COMPLETED'
      ? await target.store.complete(key, token, { expiry, responseData: JSON.stringify({ charged: 500 }) })
      : await target.store.fail(key, token, { expiry, error: { name: 'CardDeclined', message: 'no' } })
    expect(done).toBe(true)
    return key
  }
  /** Whether the next delivery of `key` would run: its claim succeeds. */
  const claimable = async (key: string): Promise<boolean> => {
    const nowMs = Date.now()
    return await target.store.claim({ key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + HOUR, inProgressExpiry: nowMs + 1000, leaseToken: randomUUID() }, nowMs) === undefined
  }
  const status = async (key: string): Promise<string | undefined> => (JSON.parse((await cli(['inspect', key, ...target.flags, '--json'])).out) as { status?: string } | null)?.status

  test('without --yes and not at a terminal: a usage error (exit 2) that names --yes, and the record stays', async () => {
    const key = await settled('no-yes', 'COMPLETED')
    const result = await cli(['release', key, '--completed', ...target.flags])
    expect(result.code).toBe(2)
    expect(result.err).toMatch(/^middy-idempotency release: --completed needs --yes when no one is at a terminal to confirm/)
    expect(await status(key)).toBe('COMPLETED')
  })

  test('--completed --yes removes the COMPLETED record, says what it removed, and the next delivery runs', async () => {
    const key = await settled('yes', 'COMPLETED')
    const result = await cli(['release', key, '--completed', '--yes', ...target.flags])
    expect(result.code).toBe(0)
    expect(result.out).toBe(`released ${key}: removed its COMPLETED record (result {"charged":500}); the next delivery runs its work again\n`)
    expect(await claimable(key)).toBe(true)
  })

  test('--json: one document saying what was removed', async () => {
    const key = await settled('json', 'COMPLETED')
    const result = await cli(['release', key, '--completed', '--yes', '--json', ...target.flags])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.out)).toMatchObject({ key, released: true, record: { status: 'COMPLETED', result: '{"charged":500}' } })
  })

  test('at a terminal: the record is shown and a y/N question asked; no keeps it, yes removes it', async () => {
    const key = await settled('asked', 'COMPLETED')
    const declined = await cli(['release', key, '--completed', ...target.flags], async () => false)
    expect(declined.code).toBe(1)
    expect(declined.asked).toHaveLength(1)
    expect(declined.asked[0]).toContain('status:       COMPLETED')
    expect(declined.asked[0]).toMatch(/Remove this COMPLETED record\? Its work runs again on the next delivery\. \[y\/N\] $/)
    expect(declined.err).toContain('not released: not confirmed')
    expect(await status(key)).toBe('COMPLETED')
    const confirmed = await cli(['release', key, '--completed', ...target.flags], async () => true)
    expect(confirmed.code).toBe(0)
    expect(await claimable(key)).toBe(true)
  })

  test('fenced: a COMPLETED record that replaced the one shown while the question was open is left alone', async () => {
    // The next delivery takes it over while the operator reads the question: a claim judged two
    // hours on, when the record has expired (an expiry in the past would let Redis drop the key
    // before the CLI reads it, on a loaded machine).
    const key = await settled('replaced', 'COMPLETED')
    const result = await cli(['release', key, '--completed', ...target.flags], async () => {
      const nowMs = Date.now() + 2 * HOUR * 1000
      const token = randomUUID()
      expect(await target.store.claim({ key, status: 'IN_PROGRESS', expiry: Math.floor(nowMs / 1000) + HOUR, inProgressExpiry: nowMs + 60_000, leaseToken: token }, nowMs)).toBeUndefined()
      expect(await target.store.complete(key, token, { expiry: Math.floor(nowMs / 1000) + HOUR, responseData: '"again"' })).toBe(true)
      return true
    })
    expect(result.code).toBe(1)
    expect(result.err).toContain('the record changed since it was read')
    const now = JSON.parse((await cli(['inspect', key, ...target.flags, '--json'])).out) as { status: string, result: string }
    expect(now).toMatchObject({ status: 'COMPLETED', result: '"again"' })
  })

  test('--completed on a record that is not COMPLETED is refused (exit 1) and names its status', async () => {
    const key = await settled('failed', 'FAILED')
    const result = await cli(['release', key, '--completed', '--yes', ...target.flags])
    expect(result.code).toBe(1)
    expect(result.err).toContain('not released: the record is FAILED, not COMPLETED: release it without --completed')
    expect(await status(key)).toBe('FAILED')
  })

  test('without --completed a COMPLETED record is refused, and the refusal names --completed', async () => {
    const key = await settled('plain', 'COMPLETED')
    const result = await cli(['release', key, '--force', ...target.flags])
    expect(result.code).toBe(1)
    expect(result.err).toMatch(/the record is COMPLETED: .*--completed/)
    expect(await status(key)).toBe('COMPLETED')
  })
})
