import { MemoryStore } from '../../../src/index.js'
import { describeStoreContract } from '../../support/contracts/store.js'

describeStoreContract('MemoryStore', () => new MemoryStore(), { modelRuns: 300, maxCommands: 40, burstRuns: 200 })
