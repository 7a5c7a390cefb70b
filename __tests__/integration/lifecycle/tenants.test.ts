import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals'
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { storedKey } from '../../../src/keys/selector.js'
import { freshTable } from '../../support/dynamodb.js'
import { httpApiEvent } from '../../support/http.js'
import { middyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

/**
 * Lambda tenant isolation: `context.tenantId` (set by Lambda from the `X-Amz-Tenant-Id` of the
 * Invoke request, https://docs.aws.amazon.com/lambda/latest/dg/tenant-isolation-context.html) is
 * part of every key's scope, in every mode, on DynamoDB Local: two tenants never share a record.
 */

type Table = Awaited<ReturnType<typeof freshTable>>

/** A Lambda context as a tenant-isolated function gets it. */
const tenantContext = (tenantId: string | undefined): Context => {
  const context = lambdaContext()
  return tenantId === undefined ? context : Object.assign(context, { tenantId })
}

describe.each(middyVersions)('tenants on DynamoDB Local, %s', (_name, middyCore) => {
  let table: Table
  beforeAll(async () => { table = await freshTable() }, 30_000)
  afterAll(async () => { await table.drop() })

  const namespaceOf = (): string => `tenants-${Math.random().toString(36).slice(2, 10)}`
  const keysOf = async (namespace: string): Promise<string[]> =>
    (await table.items()).map((i) => String(i.idempotencyKey)).filter((k) => k.startsWith(`${namespace}#`)).sort()

  test('whole event: the same event from two tenants is two records and two runs; each tenant\'s retry replays its own response', async () => {
    const namespace = namespaceOf()
    const calls = jest.fn(async (_event: unknown, context: Context) => ({ for: context.tenantId }))
    const handler = middyCore<unknown, unknown>().use(idempotency({ store: table.store, namespace, logger: false })).handler(calls)
    const event = { orderId: 'o-1', amount: 5 }
    expect(await handler({ ...event }, tenantContext('blue'))).toEqual({ for: 'blue' })
    expect(await handler({ ...event }, tenantContext('green'))).toEqual({ for: 'green' })
    expect(await handler({ ...event }, tenantContext('blue'))).toEqual({ for: 'blue' })
    expect(await handler({ ...event }, tenantContext('green'))).toEqual({ for: 'green' })
    expect(calls).toHaveBeenCalledTimes(2)
    expect(await keysOf(namespace)).toEqual([storedKey(namespace, event, 'blue'), storedKey(namespace, event, 'green')].sort())
  })

  test('the stored key shows the tenant, percent-encoded: namespace#tenant#hash', async () => {
    const namespace = namespaceOf()
    const handler = middyCore<unknown, unknown>().use(idempotency({ store: table.store, namespace, logger: false })).handler(async () => 'ok')
    await handler({ orderId: 'o-1' }, tenantContext('acme#eu/1'))
    expect(await keysOf(namespace)).toEqual([expect.stringMatching(new RegExp(`^${namespace}#acme%23eu%2F1#[0-9a-f]{64}$`))])
  })

  test('without a tenant the key is the one every earlier version stored (namespace#hash)', async () => {
    const namespace = namespaceOf()
    const handler = middyCore<unknown, unknown>().use(idempotency({ store: table.store, namespace, logger: false })).handler(async () => 'ok')
    await handler({ orderId: 'o-1' }, tenantContext(undefined))
    expect(await keysOf(namespace)).toEqual([storedKey(namespace, { orderId: 'o-1' })])
    expect(storedKey(namespace, { orderId: 'o-1' })).toMatch(new RegExp(`^${namespace}#[0-9a-f]{64}$`))
  })

  test('HTTP: the same Idempotency-Key and body from two tenants is two pieces of work', async () => {
    const namespace = namespaceOf()
    const calls = jest.fn(async (_event: unknown, context: Context) => ({ statusCode: 201, body: JSON.stringify({ for: context.tenantId }) }))
    const handler = middyCore<unknown, unknown>().use(idempotency({ store: table.store, namespace, logger: false })).handler(calls)
    expect(await handler(httpApiEvent({ key: 'k-1' }), tenantContext('blue'))).toEqual({ statusCode: 201, body: '{"for":"blue"}' })
    expect(await handler(httpApiEvent({ key: 'k-1' }), tenantContext('green'))).toEqual({ statusCode: 201, body: '{"for":"green"}' })
    expect(await handler(httpApiEvent({ key: 'k-1' }), tenantContext('green'))).toEqual({ statusCode: 201, body: '{"for":"green"}', headers: { 'Idempotent-Replayed': 'true' } })
    expect(calls).toHaveBeenCalledTimes(2)
    expect(await keysOf(namespace)).toHaveLength(2)
  })

  test('SQS batch through perRecord: the same messageId from two tenants is two records, each run once', async () => {
    const namespace = namespaceOf()
    const ran: Array<string | undefined> = []
    const handler = middyCore<SQSEvent, unknown>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: table.store, namespace, logger: false }))
      .handler(perRecord(async (_record: SQSRecord, { context }) => { ran.push(context.tenantId) }))
    const record = sqsRecord({ orderId: 'o-1' }, { messageId: '059f36b4-87a3-44ab-83d2-661975830a7d' })
    expect(failedIds(await handler(sqsEvent([record]), tenantContext('blue')))).toEqual([])
    expect(failedIds(await handler(sqsEvent([record]), tenantContext('green')))).toEqual([])
    expect(failedIds(await handler(sqsEvent([record]), tenantContext('blue')))).toEqual([])
    expect(ran).toEqual(['blue', 'green'])
    expect(await keysOf(namespace)).toEqual([storedKey(namespace, record.messageId, 'blue'), storedKey(namespace, record.messageId, 'green')].sort())
  })
})
