import { startDynamoDBLocal } from '../../scripts/dynamodb-local.mjs'

/** One DynamoDB Local for the whole run (workers inherit its endpoint); each test file makes its own tables. */
export default async function globalSetup () {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'
  const local = await startDynamoDBLocal()
  process.env.DYNAMODB_ENDPOINT = local.endpoint
  globalThis.dynamoDBLocal = local
}
