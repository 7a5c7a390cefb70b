import { describeStoreContract } from '../../support/contracts/store.js'
import { awsLiteClient, freshTable, groupedCalls } from '../../support/dynamodb.js'

// The contract on DynamoDB Local, with the default table and with a single-table design
// (other key names, a sort key, every attribute renamed).
describeStoreContract('DynamoDBStore, default table', async () => (await freshTable()).store)

describeStoreContract('DynamoDBStore, renamed attributes and a sort key', async () => (await freshTable({
  keyAttr: 'pk',
  sortKeyAttr: 'sk',
  store: { sortKeyValue: 'idem', statusAttr: 'st', expiryAttr: 'ttl', inProgressExpiryAttr: 'leaseUntil', leaseTokenAttr: 'fence', payloadHashAttr: 'ph', responseDataAttr: 'out', errorAttr: 'err' }
})).store, { modelRuns: 30 })

// Every call of the contract made beside a companion call of a key of its own, so that each goes
// out as a statement of a grouped request (a call made alone is sent as its single-item request).
describeStoreContract('DynamoDBStore, every call grouped', async () => groupedCalls((await freshTable()).store), { modelRuns: 30 })

// The same contract through an @aws-lite/client instead of the SDK: the same requests, signed by the small client.
describeStoreContract('DynamoDBStore on @aws-lite/client', async () => (await freshTable({ store: { client: (await awsLiteClient()).client } })).store, { modelRuns: 30 })

describeStoreContract('DynamoDBStore on @aws-lite/client, every call grouped', async () =>
  groupedCalls((await freshTable({ store: { client: (await awsLiteClient()).client } })).store), { modelRuns: 20 })
