/**
 * One fresh table per implementation per round, so that no state leaks between rounds.
 * Created and dropped through an uninstrumented client: table admin is never counted.
 */
import { CreateTableCommand, DeleteTableCommand, type DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb'
import { createIdempotencyTable } from '../../scripts/dynamodb-local.mjs'

/** ours on the AWS SDK, ours on `@aws-lite/client`, Powertools. */
export type Implementation = 'ours' | 'ours-lite' | 'theirs'

let tables = 0

export const createTableFor = async (admin: DynamoDBClient, implementation: Implementation): Promise<string> => {
  const tableName = `bench-${implementation}-${process.pid}-${++tables}`
  if (implementation !== 'theirs') {
    await createIdempotencyTable(admin, tableName)
  } else {
    // Powertools' default schema: partition key `id` (S), TTL on `expiration`.
    await admin.send(new CreateTableCommand({
      TableName: tableName,
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST'
    }))
    await admin.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true } }))
  }
  return tableName
}

export const dropTable = async (admin: DynamoDBClient, tableName: string): Promise<void> => {
  await admin.send(new DeleteTableCommand({ TableName: tableName }))
}
