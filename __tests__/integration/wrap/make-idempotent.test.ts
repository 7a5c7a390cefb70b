import { describeMakeIdempotent } from '../../support/contracts/make-idempotent.js'
import { integrationStores } from '../../support/stores.js'

// The same contract as on MemoryStore, on DynamoDB Local and a real redis-server through each client family.
for (const [name, make] of integrationStores) {
  describeMakeIdempotent(name, async () => {
    const target = await make()
    return { store: target.store, records: target.records, close: target.close }
  })
}
