import { afterEach, beforeEach, describe, expect, test } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { dynamodbTarget, redisTarget, runCli, useLocalAwsEnvironment, type CliRun, type CliTarget } from '../../support/cli.js'
import { keyOf } from '../../support/record-keys.js'

/**
 * A record whose times no Date can hold (an older version wrote a lease of Number.MAX_SAFE_INTEGER ms and an
 * expiry of 9e12 s from a test harness's context): the CLI shows them as their stored numbers, and its
 * list, inspect and release still work, on DynamoDB Local and on redis-server.
 */

const cli = async (...argv: string[]): Promise<CliRun> => await runCli(argv)
useLocalAwsEnvironment()
const dynamodb = dynamodbTarget
const redis = async (): Promise<CliTarget> => await redisTarget('cli-dates')

// Past the last date JavaScript holds (8.64e15 ms).
const FAR_EXPIRY_S = 9_007_199_254_740
const FAR_LEASE_MS = Number.MAX_SAFE_INTEGER

describe.each([['DynamoDB (--table)', dynamodb], ['Redis (--redis)', redis]])('a stored date no Date can hold, on %s', (_name, make) => {
  let target: CliTarget
  beforeEach(async () => { target = await make() })
  afterEach(async () => { await target.close() })

  const claimed = async (name: string, expiry: number, inProgressExpiry: number): Promise<string> => {
    const key = keyOf('orders', name)
    expect(await target.store.claim({ key, status: 'IN_PROGRESS', expiry, inProgressExpiry, leaseToken: randomUUID() }, Date.now())).toBeUndefined()
    return key
  }

  test('list shows it as its numbers and still lists the other records; inspect reads it; a forced release removes it', async () => {
    const far = await claimed('far', FAR_EXPIRY_S, FAR_LEASE_MS)
    const plain = await claimed('plain', Math.floor(Date.now() / 1000) + 3600, Date.now() + 60_000)

    const listed = await cli('list', ...target.flags)
    expect(listed).toMatchObject({ code: 0, err: '' })
    expect(listed.out).toContain(plain)
    expect(listed.out).toMatch(new RegExp(`^${far}\\s+IN_PROGRESS\\s+${FAR_EXPIRY_S}\\s+${FAR_LEASE_MS} \\(live\\)$`, 'm'))

    const inspected = await cli('inspect', far, ...target.flags)
    expect(inspected).toMatchObject({ code: 0, err: '' })
    expect(inspected.out).toContain(`expires:      ${FAR_EXPIRY_S} (protects its key)`)
    expect(inspected.out).toContain(`lease:        ${FAR_LEASE_MS} (live)`)

    const released = await cli('release', far, '--force', ...target.flags)
    expect(released).toMatchObject({ code: 0, err: '' })
    expect(released.out).toBe(`released ${far}: removed its IN_PROGRESS record (lease ${FAR_LEASE_MS} (live)); the next delivery runs it\n`)
    expect(JSON.parse((await cli('inspect', far, ...target.flags, '--json')).out)).toBeNull()
  })
})
