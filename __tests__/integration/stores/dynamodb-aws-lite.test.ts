import { afterEach, describe, expect, jest, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import { idempotency, IdempotencyStoreError } from '../../../src/index.js'
import { DynamoDBStore, transactions } from '../../../src/dynamodb.js'
import type { ClaimRecord } from '../../../src/stores/store.js'
import { awsLiteClient, endpoint, freshTable } from '../../support/dynamodb.js'
import type { DynamoDBAwsLiteClient } from '../../../src/dynamodb.js'
import { lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

const NOW = Math.floor(Date.now() / 1000) * 1000
const NOW_S = NOW / 1000
// An hour on: `expired` has expired by then, and is still in the table (DynamoDB Local's TTL
// deletes a record that expired a second ago within seconds, which would make it a new key).
const LATER = NOW + 3_600_000
const claimOf = (key: string, token: string): ClaimRecord => ({ key, status: 'IN_PROGRESS', expiry: NOW_S + 3600, inProgressExpiry: NOW + 30_000, leaseToken: token })

afterEach(() => { jest.restoreAllMocks() })

describe('DynamoDBStore on an @aws-lite/client (DynamoDB Local)', () => {
  test('a role without the PartiQL actions, as aws-lite reports it: the claims are made one item a request, with one warning naming the actions', async () => {
    const { client: real } = await awsLiteClient()
    const sent: string[] = []
    // A fault DynamoDB Local cannot be made to produce: IAM refusing BatchExecuteStatement.
    const client: DynamoDBAwsLiteClient = Object.assign(async (request: Parameters<DynamoDBAwsLiteClient>[0]) => {
      const operation = String(request.headers?.['X-Amz-Target']).replace(/^DynamoDB_20120810\./, '')
      sent.push(operation)
      if (operation === 'BatchExecuteStatement') {
        throw Object.assign(new Error('@aws-lite/client: dynamodb: User is not authorized to perform: dynamodb:PartiQLInsert'),
          { __type: 'com.amazonaws.dynamodb.v20120810#AccessDeniedException', statusCode: 400 })
      }
      return await real(request)
    }, { config: {} })
    const warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => {})
    const { store, drop } = await freshTable({ store: { client } })
    await store.claim(claimOf('warm-up', 'w'), NOW)
    sent.length = 0
    expect(await Promise.all(['a', 'b', 'c'].map(async (key) => await store.claim(claimOf(key, 't'), NOW)))).toEqual([undefined, undefined, undefined])
    expect(await Promise.all(['d', 'e'].map(async (key) => await store.claim(claimOf(key, 't'), NOW)))).toEqual([undefined, undefined])
    // One refused grouped request, then single-item claims for the life of the store.
    expect(sent).toEqual(['BatchExecuteStatement', 'PutItem', 'PutItem', 'PutItem', 'PutItem', 'PutItem'])
    const partiql = warnings.mock.calls.filter(([, options]) => (options as { code?: string } | undefined)?.code === 'MIDDY_IDEMPOTENCY_PARTIQL')
    expect(partiql).toHaveLength(1)
    expect(String(partiql[0]?.[0])).toContain('dynamodb:PartiQLInsert, dynamodb:PartiQLUpdate, dynamodb:PartiQLDelete and dynamodb:PartiQLSelect')
    await drop()
  })

  test('an @aws-lite/client instance as made by awsLite() is taken as it is', async () => {
    const { default: awsLite } = await import('@aws-lite/client')
    const client = await awsLite({ region: 'us-east-1', accessKeyId: 'local', secretAccessKey: 'local', endpoint: endpoint() })
    const { store, drop } = await freshTable({ store: { client } })
    expect(await store.claim(claimOf('plain', 't'), NOW)).toBeUndefined()
    expect(await store.claim(claimOf('plain', 'u'), NOW)).toMatchObject({ status: 'IN_PROGRESS', leaseToken: 't' })
    expect(await store.complete('plain', 't', { expiry: NOW_S + 60, responseData: '1' })).toBe(true)
    await drop()
  })

  test('grouped writes go out as BatchExecuteStatement, each statement with its own outcome (new, duplicate, lapsed, expired, refused)', async () => {
    const { client, sent } = await awsLiteClient()
    const { store, drop } = await freshTable({ store: { client } })
    await store.claim(claimOf('warm-up', 'w'), NOW)
    await store.claim(claimOf('duplicate', 'first'), NOW)
    await store.complete('duplicate', 'first', { expiry: NOW_S + 7200, responseData: '"done"' })
    await store.claim({ ...claimOf('refused', 'other'), inProgressExpiry: LATER + 30_000 }, NOW)
    await store.claim({ ...claimOf('lapsed', 'gone'), inProgressExpiry: NOW - 1 }, NOW - 5000)
    await store.claim(claimOf('expired', 'old'), NOW - 5000)
    await store.complete('expired', 'old', { expiry: NOW_S + 1800 })
    sent.length = 0
    const answers = await Promise.all(['new', 'duplicate', 'refused', 'lapsed', 'expired'].map(async (key) => await store.claim(claimOf(key, 'mine'), LATER)))
    expect(answers).toEqual([
      undefined,
      expect.objectContaining({ status: 'COMPLETED', responseData: '"done"' }),
      expect.objectContaining({ status: 'IN_PROGRESS', leaseToken: 'other' }),
      undefined,
      undefined
    ])
    const settled = await Promise.all([
      store.complete('new', 'mine', { expiry: NOW_S + 60 }),
      store.complete('refused', 'mine', { expiry: NOW_S + 60 }),
      store.release('lapsed', 'mine'),
      store.fail('expired', 'mine', { expiry: NOW_S + 60, error: { name: 'E', message: 'no' } })
    ])
    expect(settled).toEqual([true, false, true, true])
    expect(sent).toEqual(['BatchExecuteStatement', 'BatchExecuteStatement', 'BatchExecuteStatement'])
    await drop()
  })

  test("DynamoDB's errors reach the user as they do through the SDK: a missing table, an item over 400 KB", async () => {
    const { client } = await awsLiteClient()
    const missing = new DynamoDBStore({ tableName: 'no-such-table-aws-lite', client })
    const refusal = await missing.claim(claimOf('k', 't'), NOW).catch((error: unknown) => error) as IdempotencyStoreError
    expect(refusal).toBeInstanceOf(IdempotencyStoreError)
    expect(refusal.message).toBe('claim on table no-such-table-aws-lite for key k failed: table no-such-table-aws-lite does not exist (or is not ACTIVE) in this account and region')
    expect((refusal.cause as Error).name).toBe('ResourceNotFoundException')

    const { store, drop } = await freshTable({ store: { client } })
    await store.claim(claimOf('big', 't'), NOW)
    const tooBig = await store.complete('big', 't', { expiry: NOW_S + 60, responseData: 'x'.repeat(401 * 1024) }).catch((error: unknown) => error) as IdempotencyStoreError
    expect(tooBig).toBeInstanceOf(IdempotencyStoreError)
    expect((tooBig.cause as Error).name).toBe('ValidationException')
    expect((tooBig.cause as Error).message).toMatch(/size/i)
    await drop()
  })

  test('a batch through the middleware: 20 new records cost 2 requests, and transact commits through the same client', async () => {
    const { client, sent } = await awsLiteClient()
    const table = await freshTable({ store: { client, transactions } })
    const handler = middy<SQSEvent>()
      .use(idempotency({ store: table.store, namespace: 'aws-lite', logger: false }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async () => 'ok')))
    await table.store.claim(claimOf('warm-up', 'w'), NOW)
    sent.length = 0
    await handler(sqsEvent(Array.from({ length: 20 }, (_, i) => sqsRecord({ i }))), lambdaContext())
    expect(sent).toEqual(['BatchExecuteStatement', 'BatchExecuteStatement'])
    expect((await table.items()).filter((item) => item.status === 'COMPLETED')).toHaveLength(20)

    await table.store.claim(claimOf('tx', 't'), NOW)
    expect(await table.store.commit?.('tx', 't', { expiry: NOW_S + 60, responseData: '"ok"' }, [
      { Put: { TableName: table.tableName, Item: { idempotencyKey: 'effect-of-tx', status: 'COMPLETED', expiry: NOW_S + 60 } } }
    ])).toEqual({ status: 'committed' })
    expect((await table.store.read(['tx', 'effect-of-tx'])).size).toBe(2)
    await table.drop()
  })
})
