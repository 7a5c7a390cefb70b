import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { DurableContext, DurableLambdaHandler } from '@aws/durable-execution-sdk-js'
import type { Context } from 'aws-lambda'
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing'
import middy7Module from '@middy/core'
import { executionModeDurableContext } from '@middy/core/DurableContext'
import * as eventOnly from '../../../src/event.js'
import {
  idempotency, IdempotencyInProgressError, type IdempotencyOptions, type OutcomeReport
} from '../../../src/index.js'
import type { IdempotencyRecord } from '../../../src/store.js'
import { deferred } from '../../support/deferred.js'
import { recordingLogger } from '../../support/sqs.js'
import { integrationStores } from '../../support/stores.js'

// Real durable executions (docs/lambda-modes.md): the local runner invokes the function again
// after every wait, each invocation replaying from the top with the checkpointed results.
const middy7 = middy7Module as unknown as (config: Record<string, unknown>) => {
  use: (middleware: unknown) => ReturnType<typeof middy7>
  handler: (fn: (event: Order, context: DurableContext) => Promise<unknown>) => DurableLambdaHandler
}

// Middy's early timeout is off, as docs/lambda-modes.md advises for durable functions: the durable
// SDK ends an invocation short of its deadline itself, and a suspended invocation's timer would
// otherwise outlive it.
const durableMode = { executionMode: executionModeDurableContext, timeoutEarlyInMillis: 0 }

interface Order { orderId: string, amount: number }

beforeAll(async () => { await LocalDurableTestRunner.setupTestEnvironment() })
afterAll(async () => { await LocalDurableTestRunner.teardownTestEnvironment() })

/** A durable payment function: charge (a step), wait a second, send the receipt (a step). */
const paymentFunction = (store: IdempotencyOptions['store'], charges: string[], entry: typeof idempotency = idempotency) =>
  middy7(durableMode)
    .use(entry({ store, namespace: 'payments', logger: recordingLogger() }))
    .handler(async (event, context) => {
      const charge = await context.step('charge', async () => {
        charges.push(event.orderId)
        return `ch_${event.orderId}`
      })
      await context.wait({ seconds: 1 })
      const receipt = await context.step('receipt', async () => `receipt for ${charge}`)
      return { charge, receipt }
    })

// DynamoDB Local, and redis-server through one client (the store contract covers the others).
const stores = integrationStores.filter(([name]) => name === 'DynamoDBStore' || name === 'RedisStore (node-redis)')

// Whichever entry point that takes whole events is imported.
const entries: Array<[string, typeof idempotency]> = [['middy-idempotency', idempotency], ['middy-idempotency/event', eventOnly.idempotency]]

describe.each(entries)('%s', (_entry, entry) => describe.each(stores)('whole-event mode in a durable execution, %s', (_name, storeUnderTest) => {
  /** What every record of the test's namespace holds: its status, and its response when COMPLETED. */
  const stored = async (under: Awaited<ReturnType<typeof storeUnderTest>>): Promise<Array<Pick<IdempotencyRecord, 'status' | 'responseData'>>> =>
    (await under.records('payments')).map((record) => ({ status: record.status, ...(record.responseData === undefined ? {} : { responseData: record.responseData }) }))

  it.concurrent('an execution with a step, a wait and a step succeeds: the charge runs once and the record is COMPLETED with the final result', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const runner = new LocalDurableTestRunner({ handlerFunction: paymentFunction(table.store, charges, entry) })
    const execution = await runner.run({ payload: { orderId: 'o-1', amount: 42 } })
    expect(execution.getStatus()).toBe('SUCCEEDED')
    // The wait suspended the first invocation: the rest ran in a replay.
    expect(execution.getInvocations().length).toBeGreaterThan(1)
    expect(execution.getResult()).toEqual({ charge: 'ch_o-1', receipt: 'receipt for ch_o-1' })
    expect(charges).toEqual(['o-1'])
    expect(await stored(table)).toEqual([{ status: 'COMPLETED', responseData: JSON.stringify({ charge: 'ch_o-1', receipt: 'receipt for ch_o-1' }) }])
    await table.close()
  })

  it.concurrent('a second execution with the same key replays the stored result: its step never runs', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const handlerFunction = paymentFunction(table.store, charges, entry)
    await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-2', amount: 42 } })
    const second = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-2', amount: 42 } })
    expect(second.getStatus()).toBe('SUCCEEDED')
    expect(second.getResult()).toEqual({ charge: 'ch_o-2', receipt: 'receipt for ch_o-2' })
    expect(second.getOperations()).toHaveLength(0)
    expect(charges).toEqual(['o-2'])
    await table.close()
  })

  it.concurrent('a second execution while the first is suspended is refused with IdempotencyInProgressError, the record staying IN_PROGRESS; the first then completes', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    // The first execution suspends on a callback the test answers once the second has been refused.
    const handlerFunction = middy7(durableMode)
      .use(entry({ store: table.store, namespace: 'payments', logger: recordingLogger() }))
      .handler(async (event, context) => {
        const charge = await context.step('charge', async () => { charges.push(event.orderId); return `ch_${event.orderId}` })
        const approval = await context.waitForCallback('approval', async () => {})
        return { charge, approval }
      })
    const firstRunner = new LocalDurableTestRunner({ handlerFunction })
    const first = firstRunner.run({ payload: { orderId: 'o-3', amount: 42 } })
    const approval = firstRunner.getOperation('approval')
    await approval.waitForData()
    const second = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-3', amount: 42 } })
    expect(second.getStatus()).toBe('FAILED')
    expect(second.getError()).toMatchObject({ errorType: new IdempotencyInProgressError('k').name })
    // Suspended, the first neither completed nor released its record.
    expect((await stored(table)).map((record) => record.status)).toEqual(['IN_PROGRESS'])
    await approval.sendCallbackSuccess('approved')
    const done = await first
    expect(done.getStatus()).toBe('SUCCEEDED')
    expect(done.getResult()).toEqual({ charge: 'ch_o-3', approval: 'approved' })
    expect(charges).toEqual(['o-3'])
    expect((await stored(table)).map((record) => record.status)).toEqual(['COMPLETED'])
    await table.close()
  })

  it.concurrent.each<['delete' | 'fail', string[]]>([
    ['delete', []],
    ['fail', ['FAILED']]
  ])('a step that fails terminally in a replay goes through onFailure %s: the execution fails, nothing is left IN_PROGRESS', async (onFailure, statuses) => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const handlerFunction = middy7(durableMode)
      .use(entry({ store: table.store, namespace: 'payments', onFailure, logger: recordingLogger() }))
      .handler(async (event, context) => {
        const charge = await context.step('charge', async () => { charges.push(event.orderId); return `ch_${event.orderId}` })
        await context.wait({ seconds: 1 })
        return await context.step('receipt', async () => { throw new Error(`no receipt for ${charge}`) }, { retryStrategy: () => ({ shouldRetry: false }) })
      })
    const execution = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-4', amount: 42 } })
    expect(execution.getStatus()).toBe('FAILED')
    expect(execution.getInvocations().length).toBeGreaterThan(1)
    expect(execution.getError()).toMatchObject({ errorMessage: 'no receipt for ch_o-4' })
    expect(charges).toEqual(['o-4'])
    expect((await stored(table)).map((record) => record.status)).toEqual(statuses)
    await table.close()
  })

  it.concurrent('with Middy\'s early timeout on, the timer of a suspended invocation, firing later, leaves its execution\'s record alone; the execution then completes', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    const timedOut = deferred<OutcomeReport>()
    // Middy's default early timeout, on invocations given 3 s each: the first suspends on a
    // callback long before its timer fires, and nothing clears that timer.
    const durable = middy7({ executionMode: executionModeDurableContext })
      .use(entry({ store: table.store, namespace: 'payments', logger: recordingLogger(), onOutcome: (outcome) => { if (outcome.kind === 'timed-out') timedOut.resolve(outcome) } }))
      .handler(async (event, context) => {
        const charge = await context.step('charge', async () => { charges.push(event.orderId); return `ch_${event.orderId}` })
        const approval = await context.waitForCallback('approval', async () => {})
        return { charge, approval }
      })
    const handlerFunction: DurableLambdaHandler = async (event, context: Context) => await durable(event, { ...context, getRemainingTimeInMillis: () => 3_000 })
    const runner = new LocalDurableTestRunner({ handlerFunction })
    const execution = runner.run({ payload: { orderId: 'o-5', amount: 42 } })
    const approval = runner.getOperation('approval')
    await approval.waitForData()
    await timedOut.promise
    expect((await stored(table)).map((record) => record.status)).toEqual(['IN_PROGRESS'])
    await approval.sendCallbackSuccess('approved')
    const done = await execution
    expect(done.getStatus()).toBe('SUCCEEDED')
    expect(done.getResult()).toEqual({ charge: 'ch_o-5', approval: 'approved' })
    expect(charges).toEqual(['o-5'])
    expect((await stored(table)).map((record) => record.status)).toEqual(['COMPLETED'])
    await table.close()
  })
  it.concurrent('a replay that meets the record its own execution completed replays the stored result: the handler does not run again', async () => {
    const table = await storeUnderTest()
    const charges: string[] = []
    // Such a replay follows an invocation that completed the record and ended before the durable
    // SDK recorded the execution's result. The local runner cannot end an invocation there, so a
    // second execution is given the first's ARN: the same claim, token and record as such a replay.
    const arn = `arn:aws:lambda:us-east-1:123456789012:function:payments:$LATEST/durable-execution/replayed/${Math.random().toString(36).slice(2)}`
    const sameExecution = { before: (request: { context: { executionContext: unknown } }) => { request.context.executionContext = { durableExecutionArn: arn } } }
    const handlerFunction = middy7(durableMode)
      .use(sameExecution)
      .use(entry({ store: table.store, namespace: 'payments', logger: recordingLogger() }))
      .handler(async (event, context) => {
        const charge = await context.step('charge', async () => { charges.push(event.orderId); return `ch_${event.orderId}` })
        await context.wait({ seconds: 1 })
        return { charge }
      })
    const first = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-6', amount: 42 } })
    expect(first.getResult()).toEqual({ charge: 'ch_o-6' })
    const replay = await new LocalDurableTestRunner({ handlerFunction }).run({ payload: { orderId: 'o-6', amount: 42 } })
    expect(replay.getStatus()).toBe('SUCCEEDED')
    expect(replay.getResult()).toEqual({ charge: 'ch_o-6' })
    expect(charges).toEqual(['o-6'])
    expect(replay.getOperations()).toHaveLength(0)
    await table.close()
  })
}))
