import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { withDurableExecution, type DurableContext } from '@aws/durable-execution-sdk-js'
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing'
import { idempotent, type IdempotencyRecord } from '../../../src/index.js'
import { integrationStores } from '../../support/stores.js'

// idempotent(fn) called with the durable context at the top of a durable handler: every replay
// of the execution calls it again, and must carry on as the owner of its own claim
// (docs/outside-middy.md, docs/lambda-modes.md).

interface Order { orderId: string }

beforeAll(async () => { await LocalDurableTestRunner.setupTestEnvironment() })
afterAll(async () => { await LocalDurableTestRunner.teardownTestEnvironment() })

const stores = integrationStores.filter(([name]) => name === 'DynamoDBStore' || name === 'RedisStore (node-redis)')

describe.each(stores)('idempotent(fn) around a durable handler, %s', (_name, storeUnderTest) => {
  const durablePayment = (store: Parameters<typeof idempotent>[1]['store'], charges: string[]) => {
    const pay = idempotent(async (order: Order, context: DurableContext) => {
      const charge = await context.step('charge', async () => {
        charges.push(order.orderId)
        return `ch_${order.orderId}`
      })
      await context.wait({ seconds: 1 })
      return { charge, receipt: await context.step('receipt', async () => `receipt for ${charge}`) }
    }, { store, key: 'orderId', namespace: 'durable-wrap', logger: false })
    return withDurableExecution(async (event: Order, context: DurableContext) => await pay(event, context))
  }

  it('a step, a wait and a step: the execution succeeds through its replays, the charge runs once, the record is COMPLETED; a new execution replays it', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const handlerFunction = durablePayment(table.store, charges)
    const execution = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-1' } })
    expect(execution.getStatus()).toBe('SUCCEEDED')
    expect(execution.getInvocations().length).toBeGreaterThan(1)
    expect(execution.getResult()).toEqual({ charge: 'ch_o-1', receipt: 'receipt for ch_o-1' })
    const records: IdempotencyRecord[] = await table.records('durable-wrap')
    expect(records.map((r) => r.status)).toEqual(['COMPLETED'])
    const again = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-1' } })
    expect(again.getStatus()).toBe('SUCCEEDED')
    expect(again.getResult()).toEqual({ charge: 'ch_o-1', receipt: 'receipt for ch_o-1' })
    expect(charges).toEqual(['o-1'])
    await table.close()
  })
})
