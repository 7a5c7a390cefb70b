import { afterEach, describe, expect, jest, test } from '@jest/globals'
import { DeleteItemCommand, DynamoDBServiceException, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { IdempotencyStoreError } from '../../../src/index.js'
import type { ClaimRecord } from '../../../src/stores/store.js'
import { freshTable, localClient } from '../../support/dynamodb.js'

// Whole seconds, so that second and millisecond comparisons below are exact.
const NOW = Math.floor(Date.now() / 1000) * 1000
const NOW_S = NOW / 1000
// A moment an hour on, when records that expired before it are still in the table: DynamoDB's TTL
// deletes an expired item within days, DynamoDB Local within seconds (which made a record that
// expired a second ago vanish mid-test). https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html
const LATER = NOW + 3_600_000
const claimOf = (key: string, token: string, payloadHash?: string): ClaimRecord => ({
  key, status: 'IN_PROGRESS', expiry: NOW_S + 3600, inProgressExpiry: NOW + 30_000, leaseToken: token, ...(payloadHash === undefined ? {} : { payloadHash })
})

interface Sent { command: string, statements: string[] }

/**
 * A DynamoDB Local client that notes each command (with its PartiQL statements' first word) and
 * lets a test answer a BatchExecuteStatement itself: a fault the real server cannot be made to
 * produce (a role without the PartiQL actions, throttling that outlasted the SDK's retries).
 */
const watchedClient = (): { client: DynamoDBClient, sent: Sent[], fault: { next?: (statements: unknown[]) => unknown } } => {
  const client = localClient()
  const sent: Sent[] = []
  const fault: { next?: (statements: unknown[]) => unknown } = {}
  client.middlewareStack.add((next, context) => async (args) => {
    const command = String((context as { commandName?: string }).commandName).replace(/Command$/, '')
    const statements = (args.input as { Statements?: Array<{ Statement: string }> }).Statements ?? []
    sent.push({ command, statements: statements.map((s) => s.Statement.split(' ')[0] as string) })
    const inject = command === 'BatchExecuteStatement' ? fault.next : undefined
    if (inject !== undefined) {
      fault.next = undefined
      return { output: inject(statements), response: {} } as never
    }
    return await next(args)
  }, { step: 'initialize', name: 'watchGroupedWrites' })
  return { client, sent, fault }
}

const serviceError = (name: string, message: string): DynamoDBServiceException =>
  new DynamoDBServiceException({ name, message, $fault: 'client', $metadata: {} })

const thrown = (error: unknown): never => { throw error }

afterEach(() => { jest.restoreAllMocks() })

describe.each([
  ['the default table', {}],
  ['a sort key and renamed attributes', { keyAttr: 'pk', sortKeyAttr: 'sk', store: { sortKeyValue: 'idem', statusAttr: 'st', expiryAttr: 'ttl', inProgressExpiryAttr: 'until', leaseTokenAttr: 'fence', payloadHashAttr: 'ph', responseDataAttr: 'out', errorAttr: 'err' } }]
])('DynamoDBStore grouped writes on %s', (_, shape) => {
  test('the claims of a batch: INSERTs in one request, then the keys that exist in one fenced UPDATE request (new, duplicate, lapsed, expired, refused)', async () => {
    const { client, sent } = watchedClient()
    const table = await freshTable({ client, ...shape })
    const { store } = table
    await store.claim(claimOf('warm-up', 'w'), NOW)
    // duplicate: COMPLETED and protecting; refused: IN_PROGRESS under a live lease; lapsed: its lease is over; expired: past its expiry.
    // The batch claims at LATER: by then `expired` has expired, and no record has yet been deleted by TTL.
    await store.claim({ ...claimOf('duplicate', 'first'), payloadHash: 'h' }, NOW)
    await store.complete('duplicate', 'first', { expiry: NOW_S + 7200, responseData: '"done"' })
    await store.claim({ ...claimOf('refused', 'other'), inProgressExpiry: LATER + 30_000 }, NOW)
    await store.claim({ ...claimOf('lapsed', 'gone'), inProgressExpiry: NOW - 1 }, NOW - 5000)
    await store.claim(claimOf('expired', 'old', 'old-hash'), NOW - 5000)
    await store.fail('expired', 'old', { expiry: NOW_S + 1800, error: { name: 'Boom', message: 'old failure' } })
    sent.length = 0

    const keys = ['new', 'duplicate', 'refused', 'lapsed', 'expired']
    const answers = await Promise.all(keys.map(async (key) => await store.claim(claimOf(key, `mine-${key}`), LATER)))

    expect(answers[0]).toBeUndefined()
    expect(answers[1]).toMatchObject({ key: 'duplicate', status: 'COMPLETED', responseData: '"done"', payloadHash: 'h' })
    expect(answers[2]).toMatchObject({ key: 'refused', status: 'IN_PROGRESS', leaseToken: 'other' })
    expect(answers[3]).toBeUndefined()
    expect(answers[4]).toBeUndefined()
    expect(sent).toEqual([
      { command: 'BatchExecuteStatement', statements: ['INSERT', 'INSERT', 'INSERT', 'INSERT', 'INSERT'] },
      { command: 'BatchExecuteStatement', statements: ['UPDATE', 'UPDATE', 'UPDATE', 'UPDATE'] }
    ])
    const stored = await store.read(keys)
    expect(stored.get('new')).toEqual({ key: 'new', status: 'IN_PROGRESS', expiry: NOW_S + 3600, inProgressExpiry: NOW + 30_000, leaseToken: 'mine-new' })
    expect(stored.get('duplicate')).toMatchObject({ status: 'COMPLETED', leaseToken: 'first' })
    expect(stored.get('refused')).toMatchObject({ leaseToken: 'other' })
    expect(stored.get('lapsed')).toEqual({ key: 'lapsed', status: 'IN_PROGRESS', expiry: NOW_S + 3600, inProgressExpiry: NOW + 30_000, leaseToken: 'mine-lapsed' })
    // A takeover writes the whole claim, as the claim's PutItem does: the old error and hash are gone.
    expect(stored.get('expired')).toEqual({ key: 'expired', status: 'IN_PROGRESS', expiry: NOW_S + 3600, inProgressExpiry: NOW + 30_000, leaseToken: 'mine-expired' })
    await table.drop()
  })

  test('completions, failures and releases of one burst share a request, each fenced by its own lease token', async () => {
    const { client, sent } = watchedClient()
    const table = await freshTable({ client, ...shape })
    const { store } = table
    const keys = ['done', 'failed', 'released', 'stale-done', 'stale-failed', 'stale-released', 'gone']
    await Promise.all(keys.slice(0, 6).map(async (key) => await store.claim(claimOf(key, 'mine'), NOW)))
    sent.length = 0

    const answers = await Promise.all([
      store.complete('done', 'mine', { expiry: NOW_S + 60, responseData: '{"n":1}' }),
      store.fail('failed', 'mine', { expiry: NOW_S + 60, error: { name: 'E', message: 'no', code: 'C' } }),
      store.release('released', 'mine'),
      store.complete('stale-done', 'stale', { expiry: NOW_S + 60 }),
      store.fail('stale-failed', 'stale', { expiry: NOW_S + 60, error: { name: 'E', message: 'no' } }),
      store.release('stale-released', 'stale'),
      // No record under the key: PartiQL deletes nothing without an error, which is still no release.
      store.release('gone', 'mine')
    ])

    expect(answers).toEqual([true, true, true, false, false, false, false])
    expect(sent).toEqual([{ command: 'BatchExecuteStatement', statements: ['UPDATE', 'UPDATE', 'DELETE', 'UPDATE', 'UPDATE', 'DELETE', 'DELETE'] }])
    const stored = await store.read(keys)
    expect(stored.get('done')).toEqual({ key: 'done', status: 'COMPLETED', expiry: NOW_S + 60, inProgressExpiry: NOW + 30_000, leaseToken: 'mine', responseData: '{"n":1}' })
    expect(stored.get('failed')).toEqual({ key: 'failed', status: 'FAILED', expiry: NOW_S + 60, inProgressExpiry: NOW + 30_000, leaseToken: 'mine', error: { name: 'E', message: 'no', code: 'C' } })
    expect(stored.has('released')).toBe(false)
    for (const key of ['stale-done', 'stale-failed', 'stale-released']) expect(stored.get(key)).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 'mine' })
    await table.drop()
  })
})

describe('DynamoDBStore grouped writes: what goes alone, and faults', () => {
  test('a call alone is its single-item request; calls made while a request is out leave together when it returns', async () => {
    const { client, sent } = watchedClient()
    const { store, drop } = await freshTable({ client })
    await store.claim(claimOf('warm-up', 'w'), NOW)
    sent.length = 0
    const first = store.claim(claimOf('alone', 't'), NOW)
    // Made while the first is out: these wait for it, then go as one request.
    await new Promise<void>((resolve) => { process.nextTick(resolve) })
    const later = ['later-1', 'later-2', 'later-3'].map(async (key) => await store.claim(claimOf(key, 't'), NOW))
    expect(await first).toBeUndefined()
    expect(await Promise.all(later)).toEqual([undefined, undefined, undefined])
    expect(sent).toEqual([{ command: 'PutItem', statements: [] }, { command: 'BatchExecuteStatement', statements: ['INSERT', 'INSERT', 'INSERT'] }])
    await drop()
  })

  test('a statement that fails fails its own record alone, with the error of its single-item request', async () => {
    const { client } = watchedClient()
    const { store, drop } = await freshTable({ client })
    await Promise.all(['small', 'big'].map(async (key) => await store.claim(claimOf(key, 't'), NOW)))
    // Over DynamoDB's 400 KB item size (the middleware refuses such a result before the store; a store is called directly here).
    const [small, big] = await Promise.allSettled([
      store.complete('small', 't', { expiry: NOW_S + 60, responseData: '"ok"' }),
      store.complete('big', 't', { expiry: NOW_S + 60, responseData: 'x'.repeat(401 * 1024) })
    ])
    expect(small).toEqual({ status: 'fulfilled', value: true })
    expect(big.status).toBe('rejected')
    const error = (big as PromiseRejectedResult).reason as IdempotencyStoreError
    expect(error).toBeInstanceOf(IdempotencyStoreError)
    expect(error.message).toMatch(/^complete on table .* for key big failed: .*size/i)
    expect((error.cause as Error).name).toBe('ValidationException')
    expect((await store.read(['big'])).get('big')).toMatchObject({ status: 'IN_PROGRESS' })
    await drop()
  })

  test('a record deleted between its INSERT and its takeover UPDATE is inserted again', async () => {
    const { client, sent } = watchedClient()
    const { store, tableName, drop } = await freshTable({ client })
    await Promise.all(['vanishing-1', 'vanishing-2'].map(async (key) => await store.claim(claimOf(key, 'old'), NOW - 60_000)))
    // Expired at LATER, when they are claimed again; not yet at the wall clock, so TTL leaves them be.
    await Promise.all(['vanishing-1', 'vanishing-2'].map(async (key) => await store.complete(key, 'old', { expiry: NOW_S + 1800 })))
    sent.length = 0
    // Between the INSERTs (refused: the keys exist) and the UPDATEs, the records are deleted, as TTL or a release would.
    client.middlewareStack.add((next, context) => async (args) => {
      const statements = (args.input as { Statements?: Array<{ Statement: string }> }).Statements ?? []
      if (context.commandName === 'BatchExecuteStatementCommand' && statements[0]?.Statement.startsWith('UPDATE') === true) {
        for (const key of ['vanishing-1', 'vanishing-2']) await localClient().send(new DeleteItemCommand({ TableName: tableName, Key: { idempotencyKey: { S: key } } }))
      }
      return await next(args)
    }, { step: 'initialize', name: 'deleteBeforeTakeover', priority: 'low' })
    const answers = await Promise.all(['vanishing-1', 'vanishing-2'].map(async (key) => await store.claim(claimOf(key, 'new'), LATER)))
    expect(answers).toEqual([undefined, undefined])
    expect(sent.map((s) => s.statements)).toEqual([['INSERT', 'INSERT'], ['UPDATE', 'UPDATE'], ['INSERT', 'INSERT']])
    const stored = await store.read(['vanishing-1', 'vanishing-2'])
    expect([...stored.values()].map((r) => r.leaseToken)).toEqual(['new', 'new'])
    await drop()
  })

  test('a request that fails whole fails each of its records with an IdempotencyStoreError, and writes nothing', async () => {
    const { client, fault } = watchedClient()
    const { store, drop } = await freshTable({ client })
    await store.claim(claimOf('warm-up', 'w'), NOW)
    const throttled = serviceError('ProvisionedThroughputExceededException', 'The level of configured provisioned throughput for the table was exceeded')
    fault.next = () => thrown(throttled)
    const answers = await Promise.allSettled(['t-1', 't-2', 't-3'].map(async (key) => await store.claim(claimOf(key, 't'), NOW)))
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe('rejected')
      const error = (answer as PromiseRejectedResult).reason as IdempotencyStoreError
      expect(error).toBeInstanceOf(IdempotencyStoreError)
      expect(error.message).toBe(`claim on table ${store.tableName} for key t-${i + 1} failed: ProvisionedThroughputExceededException: ${throttled.message}`)
      expect(error.cause).toBe(throttled)
    }
    expect((await store.read(['t-1', 't-2', 't-3'])).size).toBe(0)
    await drop()
  })

  test.each([
    ['the whole request', () => thrown(serviceError('AccessDeniedException', 'User is not authorized to perform: dynamodb:PartiQLInsert'))],
    ['each statement', (statements: unknown[]) => ({ Responses: statements.map(() => ({ Error: { Code: 'AccessDenied', Message: 'User is not authorized to perform: dynamodb:PartiQLInsert' } })) })]
  ])('a role without the PartiQL actions (refused for %s): the records are claimed one item a request, for the life of the store, with one warning', async (_, refusal) => {
    const { client, sent, fault } = watchedClient()
    const { store, drop } = await freshTable({ client })
    await store.claim(claimOf('warm-up', 'w'), NOW)
    const warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => {})
    sent.length = 0
    fault.next = refusal
    const first = await Promise.all(['a-1', 'a-2', 'a-3'].map(async (key) => await store.claim(claimOf(key, 't'), NOW)))
    const second = await Promise.all(['b-1', 'b-2'].map(async (key) => await store.claim(claimOf(key, 't'), NOW)))
    const done = await Promise.all(['a-1', 'a-2'].map(async (key) => await store.complete(key, 't', { expiry: NOW_S + 60 })))

    expect([...first, ...second, ...done]).toEqual([undefined, undefined, undefined, undefined, undefined, true, true])
    expect(sent.map((s) => s.command)).toEqual(['BatchExecuteStatement', 'PutItem', 'PutItem', 'PutItem', 'PutItem', 'PutItem', 'UpdateItem', 'UpdateItem'])
    expect((await store.read(['a-1', 'a-2', 'a-3', 'b-1', 'b-2'])).size).toBe(5)
    const partiql = warnings.mock.calls.filter(([, options]) => (options as { code?: string } | undefined)?.code === 'MIDDY_IDEMPOTENCY_PARTIQL')
    expect(partiql).toHaveLength(1)
    expect(String(partiql[0]?.[0])).toContain('dynamodb:PartiQLInsert, dynamodb:PartiQLUpdate, dynamodb:PartiQLDelete and dynamodb:PartiQLSelect')
    await drop()
  })

  test('groupWrites: false sends single-item requests only', async () => {
    const { client, sent } = watchedClient()
    const { store, drop } = await freshTable({ client, store: { groupWrites: false } })
    await store.claim(claimOf('warm-up', 'w'), NOW)
    sent.length = 0
    await Promise.all(['o-1', 'o-2'].map(async (key) => await store.claim(claimOf(key, 't'), NOW)))
    await Promise.all(['o-1', 'o-2'].map(async (key) => await store.complete(key, 't', { expiry: NOW_S + 60 })))
    expect(sent.map((s) => s.command)).toEqual(['PutItem', 'PutItem', 'UpdateItem', 'UpdateItem'])
    expect(store.limits.maxStoreRequests).toBeUndefined()
    await drop()
  })
})
