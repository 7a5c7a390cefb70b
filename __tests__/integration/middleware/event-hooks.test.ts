import { describeWholeEvent } from '../../support/contracts/whole-event.js'
import { freshTable } from '../../support/dynamodb.js'

// The same promises as the MemoryStore unit tests, against DynamoDB Local.
describeWholeEvent('DynamoDBStore', async () => {
  const table = await freshTable()
  return { store: table.store, records: table.items }
})
