import { beforeAll, describe, expect, test } from '@jest/globals'
import fc from 'fast-check'
import { MemoryStore } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { FAR_FUTURE_MS, initialModel, storeCommands, type Real, type Scope } from './store-model/commands.js'
import { burst, burstRecords, explainingOrder } from './store-model/concurrent.js'
import type { ModelState } from './store-model/model.js'

/**
 * Model-based tests of the IdempotencyStore contract (src/stores/store.ts, DESIGN §2):
 * random interleavings of claim, complete, fail, release, read and time passing, by
 * several owners over a few keys, each step compared with a reference model (return
 * values and, through `read`, every stored record). Both stores must agree with it.
 * On failure fast-check prints the seed and the shrunk command list to replay.
 */

let runs = 0

/** The whole contract, for both stores. */
const everything: Scope = { completeOverFailed: true }
const dynamoDBScope: Scope = everything

/** One run of commands against `store`, with keys and tokens unique to the run. */
const modelProperty = (store: Real['store'], maxCommands: number, scope: Scope) =>
  fc.asyncProperty(fc.commands(storeCommands(scope), { maxCommands, size: 'max' }), fc.integer({ min: 0, max: 999_999 }), async (commands, startOffsetMs) => {
    const prefix = `run${++runs}-${Math.random().toString(36).slice(2, 8)}`
    await fc.asyncModelRun(() => ({ model: initialModel(prefix, FAR_FUTURE_MS + startOffsetMs), real: { store, prefix } }), commands)
  })

/**
 * A prelude of random commands, then claims sent all at once (some on the same key, from
 * hosts with different clocks): what they answer, and the state they leave, must be what
 * the model gives for one of their sequential orders. Conditional writes make that so on
 * DynamoDB; a read-then-write store would fail it.
 */
const concurrentClaimsProperty = (store: Real['store'], scope: Scope) =>
  fc.asyncProperty(fc.commands(storeCommands(scope), { maxCommands: 8 }), burst, fc.integer({ min: 0, max: 999_999 }), async (prelude, claims, startOffsetMs) => {
    const prefix = `burst${++runs}-${Math.random().toString(36).slice(2, 8)}`
    let model!: ModelState
    await fc.asyncModelRun(() => {
      model = initialModel(prefix, FAR_FUTURE_MS + startOffsetMs)
      return { model, real: { store, prefix } }
    }, prelude)
    const sent = burstRecords(model, prefix, claims)
    const answers = await Promise.all(sent.map(async ({ record, nowMs }) => await store.claim(record, nowMs)))
    const order = explainingOrder(model, sent, answers, await store.read(model.keys))
    expect({ answers, explainedBy: order }).toEqual({ answers, explainedBy: expect.any(Array) })
  })

describe('the IdempotencyStore contract, against a reference model', () => {
  test('MemoryStore agrees with the model', async () => {
    await fc.assert(modelProperty(new MemoryStore(), 40, everything), { numRuns: 300 })
  })

  test('MemoryStore: claims sent at once are explained by one sequential order', async () => {
    await fc.assert(concurrentClaimsProperty(new MemoryStore(), everything), { numRuns: 200 })
  })

  describe('DynamoDBStore on DynamoDB Local', () => {
    let defaults: Awaited<ReturnType<typeof freshTable>>
    let renamed: Awaited<ReturnType<typeof freshTable>>
    beforeAll(async () => {
      defaults = await freshTable()
      // A single-table design: other key names, a sort key, and every attribute renamed.
      renamed = await freshTable({
        keyAttr: 'pk',
        sortKeyAttr: 'sk',
        store: {
          sortKeyValue: 'idem',
          statusAttr: 'st',
          expiryAttr: 'ttl',
          inProgressExpiryAttr: 'leaseUntil',
          leaseTokenAttr: 'fence',
          payloadHashAttr: 'ph',
          responseDataAttr: 'out',
          errorAttr: 'err'
        }
      })
    }, 30_000)

    test('with the default table, agrees with the model', async () => {
      await fc.assert(modelProperty(defaults.store, 25, dynamoDBScope), { numRuns: 50 })
    }, 60_000)

    test('claims sent at once are explained by one sequential order', async () => {
      await fc.assert(concurrentClaimsProperty(defaults.store, dynamoDBScope), { numRuns: 40 })
    }, 60_000)

    test('with renamed attributes and a sort key, agrees with the model', async () => {
      await fc.assert(modelProperty(renamed.store, 25, dynamoDBScope), { numRuns: 30 })
    }, 60_000)
  })
})
