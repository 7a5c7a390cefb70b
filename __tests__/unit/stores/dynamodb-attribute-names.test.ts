import { expect, test } from '@jest/globals'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { IdempotencyConfigError } from '../../../src/index.js'
import { DynamoDBStore, type DynamoDBStoreOptions } from '../../../src/dynamodb.js'

// Two settings naming one attribute make one write overwrite the other: leaseTokenAttr 'payloadHash'
// loses the fencing token to the hash (a second delivery runs again), a statusAttr equal to the key
// makes every record's key its status. Refused before any request.
const client = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } })
const make = (options: Partial<DynamoDBStoreOptions>): DynamoDBStore => new DynamoDBStore({ tableName: 'Payments', client, ...options })

test.each([
  ['one option set to another\'s default', { leaseTokenAttr: 'payloadHash' }, /leaseTokenAttr and payloadHashAttr both name attribute 'payloadHash'/],
  ['an option set to the partition key\'s default', { statusAttr: 'idempotencyKey' }, /keyAttr and statusAttr both name attribute 'idempotencyKey'/],
  ['the partition key set to an attribute\'s default', { keyAttr: 'status' }, /keyAttr and statusAttr both name attribute 'status'/],
  ['two options set to one name', { expiryAttr: 'ttl', inProgressExpiryAttr: 'ttl' }, /expiryAttr and inProgressExpiryAttr both name attribute 'ttl'/],
  ['status and expiry', { statusAttr: 'expiry' }, /statusAttr and expiryAttr both name attribute 'expiry'/],
  ['the sort key and the partition key', { keyAttr: 'pk', sortKeyAttr: 'pk' }, /keyAttr and sortKeyAttr both name attribute 'pk'/],
  ['the sort key and a record attribute', { sortKeyAttr: 'error' }, /sortKeyAttr and errorAttr both name attribute 'error'/],
  ['the result and the error', { responseDataAttr: 'out', errorAttr: 'out' }, /responseDataAttr and errorAttr both name attribute 'out'/]
])('%s is refused at construction, naming both options', (_what, options, message) => {
  expect(() => make(options)).toThrow(IdempotencyConfigError)
  expect(() => make(options)).toThrow(message)
})

test('distinct names, renamed or not, are accepted', () => {
  expect(() => make({ keyAttr: 'pk', sortKeyAttr: 'sk', expiryAttr: 'expiration', statusAttr: 'state' })).not.toThrow()
  // Swapping two names is fine: each attribute still has one job.
  expect(() => make({ statusAttr: 'expiry', expiryAttr: 'status' })).not.toThrow()
})
