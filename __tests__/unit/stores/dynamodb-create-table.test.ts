import { expect, test } from '@jest/globals'
import { createTable, DynamoDBStore } from '../../../src/dynamodb.js'

/**
 * What DynamoDB Local never shows: a new table stays CREATING for a while on AWS. A sender that
 * answers as AWS does injects that state; createTable waits for ACTIVE before it turns TTL on.
 */
test('createTable waits while the new table is CREATING, then turns TTL on', async () => {
  const sent: string[] = []
  const statuses = ['CREATING', 'CREATING', 'ACTIVE']
  const table = (TableStatus: string) => ({
    Table: { TableStatus, KeySchema: [{ AttributeName: 'idempotencyKey', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'idempotencyKey', AttributeType: 'S' }] }
  })
  let created = false
  const client = {
    send: async (command: { constructor: { name: string } }) => {
      const name = command.constructor.name.replace(/Command$/, '')
      sent.push(name)
      if (name === 'DescribeTable') {
        if (!created) throw Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' })
        return table(statuses.shift() ?? 'ACTIVE')
      }
      if (name === 'CreateTable') created = true
      if (name === 'DescribeTimeToLive') return { TimeToLiveDescription: { TimeToLiveStatus: 'DISABLED' } }
      return {}
    }
  }
  const store = new DynamoDBStore({ tableName: 'T', client: client as never })
  expect(await createTable(store, { pollMs: 1 })).toEqual({ tableName: 'T', created: true, ttl: 'enabled', partitionKey: 'idempotencyKey', ttlAttribute: 'expiry' })
  expect(sent).toEqual(['DescribeTable', 'CreateTable', 'DescribeTable', 'DescribeTable', 'DescribeTable', 'DescribeTimeToLive', 'UpdateTimeToLive'])
})
