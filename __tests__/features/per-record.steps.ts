import { expect } from '@jest/globals'
import { CreateTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { KinesisStreamEvent, KinesisStreamRecord, MSKEvent, MSKRecord, SQSEvent, SQSRecord } from 'aws-lambda'
import { defineFeature, loadFeature } from 'jest-cucumber'
import { idempotency, IdempotencyTransactError, perRecord, storedKeyOf, type RecordTools } from './support.js'
import { deferred } from '../support/deferred.js'
import { freshTable } from '../support/dynamodb.js'
import { transactions } from '../../src/dynamodb.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../support/sqs.js'
import { kafkaRecord, mskEvent } from '../support/kafka.js'
import { kinesisEvent, kinesisRecord, retriedFrom } from '../support/streams.js'

const feature = loadFeature('__tests__/features/per-record.feature')
const list = (text: string): string[] => text.split(',').map((s) => s.trim())

defineFeature(feature, (scenario) => {
  let table: Awaited<ReturnType<typeof freshTable>>
  let namespace: string
  let nowMs: number
  let runs: Map<string, number>
  let batch: SQSRecord[]
  let response: unknown
  let handler: (event: unknown, context: unknown) => Promise<unknown>
  const reasons = new Map<string, unknown>()
  const hang = deferred()

  const setUp = async (): Promise<void> => {
    // The store of the stories: built with `transactions`, since one of them places orders with transact.
    table = await freshTable({ store: { transactions } })
    namespace = `orders-${Math.random()}`
    nowMs = Date.now()
    runs = new Map()
    reasons.clear()
  }
  const stack = (fn: (record: SQSRecord, tools: RecordTools) => Promise<unknown>, timeoutEarlyInMillis = 0) => middy<SQSEvent>({ timeoutEarlyInMillis })
    .use(sqsPartialBatchFailure({ logger: (reason: unknown, record: SQSRecord) => { reasons.set(record.messageId, reason) } }))
    .use(idempotency({ store: table.store, namespace, key: 'body.orderId', logger: false, now: () => nowMs }))
    .handler(perRecord(fn)) as unknown as (event: unknown, context: unknown) => Promise<unknown>
  const idOf = (orderId: string): string => batch.find((r) => JSON.parse(r.body).orderId === orderId)?.messageId ?? 'missing'
  const statusOf = async (orderId: string) => (await table.items()).find((i) => i.idempotencyKey === storedKeyOf(namespace, orderId))?.status

  scenario('A record hanging to the deadline re-runs alone', ({ given, and, when, then }) => {
    let hangs = ''
    let settled: Promise<void>
    given('an SQS order consumer written with perRecord', async () => {
      await setUp()
      let done = 0
      const allButOne = deferred()
      settled = allButOne.promise
      handler = stack(async (record) => {
        const { orderId } = JSON.parse(record.body) as { orderId: string }
        runs.set(orderId, (runs.get(orderId) ?? 0) + 1)
        if (orderId === hangs && runs.get(orderId) === 1) await hang.promise
        return { orderId }
      }, 300)
      // The four quick records' completions are awaited as an event, not as time.
      const store = table.store
      const complete = store.complete.bind(store)
      store.complete = async (...args) => { const held = await complete(...args); if (++done === 4) allButOne.resolve(); return held }
    })
    and(/^the downstream call for order "(.*)" hangs$/, (orderId: string) => { hangs = orderId })
    when(/^orders "(.*)" arrive in one batch and the function times out$/, async (text: string) => {
      batch = list(text).map((orderId) => sqsRecord({ orderId }))
      // Middy's early timeout is a real-time timer set once, at the start: the deadline leaves the
      // four quick records ample time even on a loaded machine (they finished late at 900 ms).
      const deadline = Date.now() + 5000
      response = await handler(sqsEvent(batch), lambdaContext(() => deadline - Date.now()))
      await settled
    })
    then(/^the batch response reports only "(.*)" as failed$/, (orderId: string) => { expect(failedIds(response)).toEqual([idOf(orderId)]) })
    and(/^orders "(.*)" are COMPLETED and "(.*)" is still IN_PROGRESS$/, async (done: string, running: string) => {
      for (const orderId of list(done)) expect(await statusOf(orderId)).toBe('COMPLETED')
      expect(await statusOf(running)).toBe('IN_PROGRESS')
    })
    when('the lease lapses and the batch is delivered again', async () => {
      nowMs += 60_000
      response = await handler(sqsEvent(batch.map(redelivered)), lambdaContext())
    })
    then('the batch response reports nothing as failed', () => { expect(failedIds(response)).toEqual([]) })
    and(/^only "(.*)" ran a second time$/, (orderId: string) => {
      expect([...runs.entries()].filter(([, n]) => n > 1).map(([id]) => id)).toEqual([orderId])
      hang.resolve()
    })
  })

  scenario('An order and its stock reservation commit with the record, or not at all', ({ given, and, when, then }) => {
    const orders = `orders-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
    const stock = `stock-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
    let limit = 0
    given('an SQS order consumer that places orders with transact', async () => {
      await setUp()
      for (const [name, key] of [[orders, 'orderId'], [stock, 'sku']] as const) {
        await table.client.send(new CreateTableCommand({ TableName: name, KeySchema: [{ AttributeName: key, KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' }))
      }
      handler = stack(async (record, { transact }) => {
        const { orderId, sku } = JSON.parse(record.body) as { orderId: string, sku: string }
        runs.set(orderId, (runs.get(orderId) ?? 0) + 1)
        transact(
          { Put: { TableName: orders, Item: { orderId, sku }, ConditionExpression: 'attribute_not_exists(orderId)' } },
          { Update: { TableName: stock, Key: { sku }, UpdateExpression: 'ADD reserved :one', ConditionExpression: 'attribute_not_exists(reserved) OR reserved < :limit', ExpressionAttributeValues: { ':one': 1, ':limit': limit } } }
        )
        return { placed: orderId }
      })
    })
    and(/^sku "(.*)" has (\d+) units? left$/, (_sku: string, units: string) => { limit = Number(units) })
    when(/^orders "(.*)" arrive in one batch$/, async (text: string) => {
      batch = list(text).map((entry) => { const [orderId, sku] = entry.split(':'); return sqsRecord({ orderId, sku }) })
      // One at a time, so that the second order meets the first one's reservation.
      response = await handler(sqsEvent(batch.slice(0, 1)), lambdaContext())
      const second = await handler(sqsEvent(batch.slice(1)), lambdaContext())
      response = { batchItemFailures: [...failedIds(response), ...failedIds(second)].map((itemIdentifier) => ({ itemIdentifier })) }
    })
    then(/^the batch response reports only "(.*)" as failed, because its stock condition failed$/, (orderId: string) => {
      expect(failedIds(response)).toEqual([idOf(orderId)])
      const reason = reasons.get(idOf(orderId)) as IdempotencyTransactError
      expect(reason).toBeInstanceOf(IdempotencyTransactError)
      expect([reason.entry, reason.code]).toEqual([1, 'ConditionalCheckFailed'])
    })
    and(/^order "(.*)" is placed and "(.*)" is not, and (\d+) units? of "(.*)" (?:is|are) reserved$/, async (placed: string, refused: string, units: string, sku: string) => {
      const get = async (name: string, key: Record<string, { S: string }>) => (await table.client.send(new GetItemCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item
      expect(await get(orders, { orderId: { S: placed } })).toBeDefined()
      expect(await get(orders, { orderId: { S: refused } })).toBeUndefined()
      expect((await get(stock, { sku: { S: sku } }))?.reserved?.N).toBe(units)
    })
    when('the batch is delivered again', async () => {
      response = await handler(sqsEvent(batch.slice(0, 1).map(redelivered)), lambdaContext())
    })
    then(/^order "(.*)" is replayed without placing it again$/, (orderId: string) => {
      expect(failedIds(response)).toEqual([])
      expect(runs.get(orderId)).toBe(1)
    })
  })

  scenario('A Kinesis consumer keeps each partition key in order', ({ given, and, when, then }) => {
    const failing = new Set<string>()
    let records: KinesisStreamRecord[]
    const ran: string[] = []
    given('a Kinesis consumer written with perRecord', async () => {
      await setUp()
      handler = middy<KinesisStreamEvent>()
        .use(idempotency({ store: table.store, namespace, logger: false }))
        .handler(perRecord(async (record: KinesisStreamRecord) => {
          const { id } = JSON.parse(Buffer.from(record.kinesis.data, 'base64').toString()) as { id: string }
          ran.push(id)
          if (failing.delete(id)) throw new Error(`${id} failed`)
        })) as unknown as (event: unknown, context: unknown) => Promise<unknown>
    })
    and(/^event "(.*)" fails once$/, (id: string) => { failing.add(id) })
    when(/^events "(.*)" arrive from the shard$/, async (text: string) => {
      records = list(text).map((entry) => { const [id, key] = entry.split(':'); return kinesisRecord({ id }, key) })
      response = await handler(kinesisEvent(records), lambdaContext())
    })
    const seqOf = (id: string): string | undefined => records.find((r) => JSON.parse(Buffer.from(r.kinesis.data, 'base64').toString()).id === id)?.kinesis.sequenceNumber
    then(/^Lambda is told "(.*)" failed$/, (text: string) => { expect(failedIds(response)).toEqual(list(text).map(seqOf)) })
    when(/^Lambda retries the shard from "(.*)"$/, async (id: string) => {
      ran.length = 0
      response = await handler(kinesisEvent(retriedFrom(records, records.findIndex((r) => r.kinesis.sequenceNumber === seqOf(id)))), lambdaContext())
    })
    then('the response reports nothing as failed', () => { expect(failedIds(response)).toEqual([]) })
    and(/^"(.*)" ran on the retry and "(.*)" was replayed$/, (text: string, replayed: string) => {
      expect(ran).toEqual(list(text))
      expect(ran).not.toContain(replayed)
    })
  })

  scenario('A Kafka consumer keeps each topic-partition in order and reports offsets', ({ given, and, when, then }) => {
    const failing = new Set<string>()
    let records: MSKRecord[]
    const ran: string[] = []
    given('a Kafka consumer written with perRecord', async () => {
      await setUp()
      handler = middy<MSKEvent>()
        .use(idempotency({ store: table.store, namespace, key: 'value.id', logger: false }))
        .handler(perRecord(async (record: MSKRecord) => {
          const { id } = JSON.parse(Buffer.from(record.value, 'base64').toString()) as { id: string }
          ran.push(id)
          if (failing.delete(id)) throw new Error(`${id} failed`)
        })) as unknown as (event: unknown, context: unknown) => Promise<unknown>
    })
    and(/^payment "(.*)" fails once$/, (id: string) => { failing.add(id) })
    when(/^payments "(.*)" arrive from the cluster$/, async (text: string) => {
      const offsets = new Map<number, number>()
      records = list(text).map((entry) => {
        const [id, partition] = entry.split(':')
        const p = Number(partition)
        const offset = offsets.get(p) ?? 0
        offsets.set(p, offset + 1)
        return kafkaRecord('payments', p, offset, { id })
      })
      response = await handler(mskEvent(records), lambdaContext())
    })
    then(/^"(.*)" ran and "(.*)" was held back behind "(.*)"$/, (text: string, held: string, failed: string) => {
      const idOf = (r: MSKRecord): string => (JSON.parse(Buffer.from(r.value, 'base64').toString()) as { id: string }).id
      const recordOf = (id: string): MSKRecord | undefined => records.find((r) => idOf(r) === id)
      const partition = recordOf(held)?.partition
      // Partitions run side by side: the order across them is not promised; within one, offset
      // order up to its failure, and nothing after it.
      expect([...ran].sort()).toEqual(list(text).sort())
      expect(ran.filter((id) => recordOf(id)?.partition === partition))
        .toEqual(records.filter((r) => r.partition === partition && r.offset <= (recordOf(failed)?.offset ?? -1)).map(idOf))
      expect(ran).not.toContain(held)
    })
    and(/^Lambda reads the failures as partition "(.*)" at offsets (.*)$/, (partition: string, offsets: string) => {
      // What Lambda reads is the JSON of the answer: objects naming the partition and a numeric offset.
      expect(JSON.parse(JSON.stringify(response))).toEqual({ batchItemFailures: list(offsets).map((offset) => ({ itemIdentifier: { partition, offset: Number(offset) } })) })
    })
    and(/^"(.*)" are COMPLETED and neither "(.*)" nor "(.*)" is kept in the store$/, async (done: string, failed: string, held: string) => {
      const items = await table.items()
      const statusOf = (id: string) => items.find((i) => i.idempotencyKey === storedKeyOf(namespace, id))?.status
      for (const id of list(done)) expect(statusOf(id)).toBe('COMPLETED')
      // The failure is released (Kafka counts no deliveries: never kept FAILED); the record held back was never claimed.
      expect([statusOf(failed), statusOf(held)]).toEqual([undefined, undefined])
    })
    when(/^Lambda resumes partition "(.*)" from offset (\d+)$/, async (partition: string, offset: string) => {
      ran.length = 0
      // Only the reported partition comes again; the other one was committed to its end.
      response = await handler(mskEvent(records.filter((r) => `${r.topic}-${r.partition}` === partition && r.offset >= Number(offset))), lambdaContext())
    })
    then('the response reports nothing as failed', () => { expect(JSON.parse(JSON.stringify(response))).toEqual({ batchItemFailures: [] }) })
    and(/^"(.*)" ran on the retry and "(.*)" was not$/, (text: string, replayed: string) => {
      expect(ran).toEqual(list(text))
      expect(ran).not.toContain(replayed)
    })
  })
})
