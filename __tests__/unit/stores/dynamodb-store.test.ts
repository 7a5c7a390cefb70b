import { describe, expect, test, beforeEach } from '@jest/globals'
import { mockClient } from 'aws-sdk-client-mock'
import { DeleteItemCommand, DynamoDBClient, PutItemCommand, UpdateItemCommand, BatchGetItemCommand } from '@aws-sdk/client-dynamodb'
import { IdempotencyConfigError, IdempotencyStoreError } from '../../../src/index.js'
import { DynamoDBStore, transactions } from '../../../src/dynamodb.js'
import type { ClaimRecord } from '../../../src/stores/store.js'

// Faults DynamoDB Local cannot produce, injected with aws-sdk-client-mock. Everything the
// server can do is tested against the real thing in __tests__/integration.

const awsError = (name: string, message = name) => Object.assign(new Error(message), { name, $metadata: {} })
const record: ClaimRecord = { key: 'ns#k', status: 'IN_PROGRESS', expiry: 10, inProgressExpiry: 10_000, leaseToken: 't' }

describe('DynamoDBStore faults', () => {
  const client = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } })
  const mock = mockClient(client)
  const store = new DynamoDBStore({ tableName: 'Payments', client })
  beforeEach(() => { mock.reset() })

  test('throttling that reaches the store (the SDK gave up retrying) is a store error keeping the AWS error as cause', async () => {
    const throttled = awsError('ProvisionedThroughputExceededException', 'rate exceeded')
    mock.on(PutItemCommand).rejects(throttled)
    const error = await store.claim(record, 0).catch((e: unknown) => e) as IdempotencyStoreError
    expect(error).toBeInstanceOf(IdempotencyStoreError)
    expect(error.operation).toBe('claim')
    expect(error.cause).toBe(throttled)
    expect(error.message).toBe('claim on table Payments for key ns#k failed: ProvisionedThroughputExceededException: rate exceeded')
  })

  test('a network error on completion is a store error, never "lease lost"', async () => {
    mock.on(UpdateItemCommand).rejects(awsError('TimeoutError', 'socket hang up'))
    await expect(store.complete('ns#k', 't', { expiry: 1 })).rejects.toThrow(IdempotencyStoreError)
    await expect(store.fail('ns#k', 't', { expiry: 1, error: { name: 'E', message: 'm' } })).rejects.toMatchObject({ operation: 'fail' })
  })

  test('a refused release (condition failed) is a lost lease, other errors are store errors', async () => {
    mock.on(DeleteItemCommand).rejectsOnce(awsError('ConditionalCheckFailedException')).rejectsOnce(awsError('InternalServerError'))
    expect(await store.release('ns#k', 't')).toBe(false)
    await expect(store.release('ns#k', 't')).rejects.toMatchObject({ name: 'IdempotencyStoreError', operation: 'release' })
  })

  test('AccessDenied names the action the role is missing', async () => {
    mock.on(BatchGetItemCommand).rejects(awsError('AccessDeniedException', 'User is not authorized to perform: dynamodb:BatchGetItem'))
    await expect(store.read(['ns#k'])).rejects.toThrow(/needs dynamodb:BatchGetItem on table Payments/)
  })

  test('a missing table is named as such', async () => {
    mock.on(PutItemCommand).rejects(awsError('ResourceNotFoundException', 'Requested resource not found'))
    await expect(store.claim(record, 0)).rejects.toThrow('claim on table Payments for key ns#k failed: table Payments does not exist (or is not ACTIVE) in this account and region')
  })

  test('a refused claim without the standing record is a store error, never a claim', async () => {
    mock.on(PutItemCommand).rejects(awsError('ConditionalCheckFailedException'))
    await expect(store.claim(record, 0)).rejects.toThrow(IdempotencyStoreError)
  })

  test('bad constructor options are caught at once, naming the option', () => {
    expect(() => new DynamoDBStore({ tableName: '' })).toThrow(new IdempotencyConfigError('DynamoDBStore: tableName must be a non-empty string'))
    expect(() => new DynamoDBStore({ tableName: 't', client: {} as never })).toThrow(/client must be a DynamoDBClient, a DynamoDBDocumentClient or an @aws-lite\/client instance/)
    expect(() => new DynamoDBStore({ tableName: 't', statusAttr: '' })).toThrow('DynamoDBStore: statusAttr must be a non-empty string')
  })
})

describe('DynamoDBStore transactions', () => {
  test('without transactions the store has no commit nor checkWrite (transact is refused); with them it has both', () => {
    const plain = new DynamoDBStore({ tableName: 't' })
    expect('commit' in plain).toBe(false)
    expect('checkWrite' in plain).toBe(false)
    const transacting = new DynamoDBStore({ tableName: 't', transactions })
    expect(typeof transacting.commit).toBe('function')
    expect(transacting.checkWrite?.({ Insert: { TableName: 't' } })).toBe('it must have exactly one of Put, Update, Delete, ConditionCheck (it has Insert)')
  })

  test('a transactions value that is not the export is refused, naming where to import it from; a misspelt option is named', () => {
    expect(() => new DynamoDBStore({ tableName: 't', transactions: true as never }))
      .toThrow(new IdempotencyConfigError("DynamoDBStore: transactions must be the transactions exported by 'middy-idempotency/dynamodb'"))
    expect(() => new DynamoDBStore({ tableName: 't', transaction: transactions } as never)).toThrow("DynamoDBStore: unknown option 'transaction' (did you mean 'transactions'?)")
  })
})
