import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { withDurableExecution, type DurableContext } from '@aws/durable-execution-sdk-js'
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing'
import { makeIdempotent } from '../../../src/index.js'
import type { IdempotencyRecord } from '../../../src/store.js'
import { integrationStores } from '../../support/stores.js'

// makeIdempotent(fn) called with the durable context at the top of a durable handler: every replay
// of the execution calls it again, and must carry on as the owner of its own claim
// (docs/outside-middy.md, docs/lambda-modes.md).

interface Order { orderId: string }

beforeAll(async () => { await LocalDurableTestRunner.setupTestEnvironment() })
afterAll(async () => { await LocalDurableTestRunner.teardownTestEnvironment() })

const stores = integrationStores.filter(([name]) => name === 'DynamoDBStore' || name === 'RedisStore (node-redis)')

describe.each(stores)('makeIdempotent(fn) around a durable handler, %s', (_name, storeUnderTest) => {
  const durablePayment = (store: Parameters<typeof makeIdempotent>[1]['store'], charges: string[]) => {
    const pay = makeIdempotent(async (order: Order, context: DurableContext) => {
      const charge = await context.step('charge', async () => {
        charges.push(order.orderId)
        return `ch_${order.orderId}`
      })
      await context.wait({ seconds: 1 })
      return { charge, receipt: await context.step('receipt', async () => `receipt for ${charge}`) }
    }, { store, key: 'orderId', namespace: 'durable-wrap', logger: false })
    return withDurableExecution(async (event: Order, context: DurableContext) => await pay(event, context))
  }

  it.concurrent('a step, a wait and a step: the execution succeeds through its replays, the charge runs once, the record is COMPLETED; a new execution replays it', async () => {
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
  // An order holding the same item twice: one execution calls the wrapped function twice with
  // the same key. Its charge is a plain call, not a step: a replay calls it again unless the
  // stored result answers.
  const chargePerItem = (store: Parameters<typeof makeIdempotent>[1]['store'], charges: string[]) =>
    makeIdempotent(async (item: { sku: string }, _context: DurableContext) => {
      charges.push(item.sku)
      return `ch-${charges.length}`
    }, { store, key: 'sku', namespace: 'durable-items', logger: false })

  it.concurrent('the same key twice in one execution, then a wait: the second call and every replay get the first call\'s stored result; the charge runs once', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const charge = chargePerItem(table.store, charges)
    const handlerFunction = withDurableExecution(async (order: { items: Array<{ sku: string }> }, context: DurableContext) => {
      const receipts: string[] = []
      for (const item of order.items) receipts.push(await charge(item, context))
      await context.wait({ seconds: 1 })
      return receipts
    })
    const execution = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { items: [{ sku: 'book' }, { sku: 'book' }] } })
    expect(execution.getStatus()).toBe('SUCCEEDED')
    expect(execution.getInvocations().length).toBeGreaterThan(1)
    expect(execution.getResult()).toEqual(['ch-1', 'ch-1'])
    expect(charges).toEqual(['book'])
    expect((await table.records('durable-items')).map((r) => [r.status, r.responseData])).toEqual([['COMPLETED', '"ch-1"']])
    await table.close()
  })

  it.concurrent('the same key twice at once in one execution: one call runs, the other rejects with IdempotencyInProgressError', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const charge = chargePerItem(table.store, charges)
    const handlerFunction = withDurableExecution(async (order: { items: Array<{ sku: string }> }, context: DurableContext) =>
      (await Promise.allSettled(order.items.map(async (item) => await charge(item, context))))
        .map((settled) => settled.status === 'fulfilled' ? settled.value : (settled.reason as Error).name).sort())
    const execution = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { items: [{ sku: 'book' }, { sku: 'book' }] } })
    expect(execution.getStatus()).toBe('SUCCEEDED')
    expect(execution.getResult()).toEqual(['IdempotencyInProgressError', 'ch-1'])
    expect(charges).toEqual(['book'])
    await table.close()
  })
})
