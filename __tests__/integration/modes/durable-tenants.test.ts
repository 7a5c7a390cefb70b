import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { withDurableExecution, type DurableContext, type DurableLambdaHandler } from '@aws/durable-execution-sdk-js'
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing'
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'
import middy7Module from '@middy/core'
import { executionModeDurableContext } from '@middy/core/DurableContext'
import { idempotency, makeIdempotent, perRecord, type IdempotencyStore } from '../../../src/index.js'
import { storedKey } from '../../../src/keys/selector.js'
import { freshTable } from '../../support/dynamodb.js'
import { sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'

// Lambda tenant isolation in a durable function (docs/lambda-modes.md): Lambda sets the tenant on
// its own context, which the durable SDK keeps as `lambdaContext`; Middy 7's durable mode copies
// `tenantId` from the SDK's `executionContext`, which does not carry it (SDK 2.4.0), so
// `context.tenantId` is undefined there. The local runner cannot invoke with a tenant: each
// function below hands the SDK the runner's Lambda context with `tenantId` set, as Lambda does in
// tenant isolation mode (https://docs.aws.amazon.com/lambda/latest/dg/tenant-isolation-context.html).
const middy7 = middy7Module as unknown as (config: Record<string, unknown>) => {
  use: (middleware: unknown) => ReturnType<typeof middy7>
  handler: (fn: unknown) => DurableLambdaHandler
}
const durableMode = { executionMode: executionModeDurableContext, timeoutEarlyInMillis: 0 }

beforeAll(async () => { await LocalDurableTestRunner.setupTestEnvironment() })
afterAll(async () => { await LocalDurableTestRunner.teardownTestEnvironment() })

/** The durable handler invoked as a tenant-isolated function is, for tenant `tenantId`. */
const asTenant = (handler: DurableLambdaHandler, tenantId: string): DurableLambdaHandler =>
  async (event, context: Context) => await handler(event, { ...context, tenantId } as Context)

/** The tenant as Lambda set it: on the Lambda context inside the durable one. */
const tenantOf = (context: DurableContext): string => String((context.lambdaContext as Context & { tenantId?: string }).tenantId)

/** Runs one durable execution of `handler` for each tenant in turn: their results, in order. */
const runAs = async (handler: DurableLambdaHandler, tenants: string[], payload: unknown): Promise<unknown[]> => {
  const results: unknown[] = []
  for (const tenant of tenants) {
    const execution = await new LocalDurableTestRunner({ handlerFunction: asTenant(handler, tenant) }).run({ payload })
    expect(execution.getStatus()).toBe('SUCCEEDED')
    results.push(execution.getResult())
  }
  return results
}

// The tests run at once (`it.concurrent`, each waits out durable waits of a second), and Jest starts
// such tests once the file's top-level hooks have run: the table is made there.
let table: Awaited<ReturnType<typeof freshTable>>
beforeAll(async () => { table = await freshTable() }, 30_000)
afterAll(async () => { await table.drop() })

describe('tenants in a durable function with Middy 7, on DynamoDB Local', () => {
  const keysOf = async (namespace: string): Promise<string[]> =>
    (await table.items()).map((item) => String(item.idempotencyKey)).filter((key) => key.startsWith(`${namespace}#`)).sort()

  /** A payment that charges in a step, waits (so the execution replays), and answers for whom it charged. */
  const pay = async (charges: string[], context: DurableContext): Promise<{ chargedFor: string }> => {
    const chargedFor = await context.step('charge', async () => { charges.push(tenantOf(context)); return tenantOf(context) })
    await context.wait({ seconds: 1 })
    return { chargedFor }
  }

  it.concurrent('whole event: tenant acme, then tenant globex with the same event, each get their own charge and result; acme again replays its own', async () => {
    const charges: string[] = []
    const store: IdempotencyStore = table.store
    const handler = middy7(durableMode)
      .use(idempotency({ store, namespace: 'durable-tenants-event', logger: recordingLogger() }))
      .handler(async (_event: unknown, context: DurableContext) => await pay(charges, context))
    const event = { orderId: 'o-1', amount: 42 }
    expect(await runAs(handler, ['acme', 'globex', 'acme'], event)).toEqual([{ chargedFor: 'acme' }, { chargedFor: 'globex' }, { chargedFor: 'acme' }])
    expect(charges).toEqual(['acme', 'globex'])
    expect(await keysOf('durable-tenants-event')).toEqual([storedKey('durable-tenants-event', event, 'acme'), storedKey('durable-tenants-event', event, 'globex')].sort())
  })

  it.concurrent('perRecord: the same record from tenant acme, then tenant globex, runs once for each', async () => {
    const charges: string[] = []
    const handler = middy7(durableMode)
      .use(sqsPartialBatchFailure({ logger: () => {} }))
      .use(idempotency({ store: table.store, namespace: 'durable-tenants-batch', logger: recordingLogger() }))
      .handler(perRecord(async (_record: SQSRecord, { context }: { context: unknown }) => (await pay(charges, context as DurableContext)).chargedFor))
    const record = sqsRecord({ orderId: 'o-1' }, { messageId: '059f36b4-87a3-44ab-83d2-661975830a7d' })
    const results = await runAs(handler, ['acme', 'globex', 'acme'], sqsEvent([record]) satisfies SQSEvent)
    expect(results.map(failedIds)).toEqual([[], [], []])
    expect(charges).toEqual(['acme', 'globex'])
    expect(await keysOf('durable-tenants-batch')).toEqual([storedKey('durable-tenants-batch', record.messageId, 'acme'), storedKey('durable-tenants-batch', record.messageId, 'globex')].sort())
  })

  it.concurrent('makeIdempotent(fn) given the durable context: tenant acme, then tenant globex with the same key, each get their own result', async () => {
    const charges: string[] = []
    const charge = makeIdempotent(async (_order: { orderId: string }, context: DurableContext) => await pay(charges, context),
      { store: table.store, namespace: 'durable-tenants-wrap', key: 'orderId', logger: false })
    const handler = withDurableExecution(async (order: { orderId: string }, context: DurableContext) => await charge(order, context))
    expect(await runAs(handler, ['acme', 'globex', 'acme'], { orderId: 'o-1' })).toEqual([{ chargedFor: 'acme' }, { chargedFor: 'globex' }, { chargedFor: 'acme' }])
    expect(charges).toEqual(['acme', 'globex'])
    expect(await keysOf('durable-tenants-wrap')).toEqual([storedKey('durable-tenants-wrap', 'o-1', 'acme'), storedKey('durable-tenants-wrap', 'o-1', 'globex')].sort())
  })
})
