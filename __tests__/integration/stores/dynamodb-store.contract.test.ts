import { describeStoreContract } from '../../support/contracts/store.js'
import { freshTable } from '../../support/dynamodb.js'

// The contract on DynamoDB Local, with the default table and with a single-table design
// (other key names, a sort key, every attribute renamed).
describeStoreContract('DynamoDBStore, default table', async () => (await freshTable()).store)

describeStoreContract('DynamoDBStore, renamed attributes and a sort key', async () => (await freshTable({
  keyAttr: 'pk',
  sortKeyAttr: 'sk',
  store: { sortKeyValue: 'idem', statusAttr: 'st', expiryAttr: 'ttl', inProgressExpiryAttr: 'leaseUntil', leaseTokenAttr: 'fence', payloadHashAttr: 'ph', responseDataAttr: 'out', errorAttr: 'err' }
})).store, { modelRuns: 30 })
