import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import type { SQSEvent } from 'aws-lambda'
import { IdempotencyConfigError, MemoryStore } from '../../../src/index.js'
import * as batchOnly from '../../../src/batch.js'
import * as eventOnly from '../../../src/event.js'
import { httpApiEvent } from '../../support/http.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { lambdaContext, recordingLogger, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'

describe("idempotency from 'middy-idempotency/batch'", () => {
  test('runs each record of an SQS batch once, as the main entry does', async () => {
    const store = new MemoryStore()
    const ran: string[] = []
    const handler = middy<SQSEvent>().use(batchOnly.idempotency({ store, logger: false })).handler(batchOnly.perRecord<SQSEvent>(async (record) => { ran.push(record.body) }))
    const event = sqsEvent([sqsRecord({ n: 1 }), sqsRecord({ n: 2 })])
    await handler(structuredClone(event), lambdaContext())
    await handler(structuredClone(event), lambdaContext())
    expect(ran).toEqual(['{"n":1}', '{"n":2}'])
  })

  test('refuses a whole event, naming the entry point that takes it; nothing is claimed, the handler is not called', async () => {
    const store = new MemoryStore()
    const logger = recordingLogger()
    let called = false
    const handler = middy().use(batchOnly.idempotency({ store, logger })).handler(async () => { called = true; return { statusCode: 200 } })
    const refused = handler(httpApiEvent({ method: 'POST', key: 'k-1', body: '{}' }), lambdaContext())
    await expect(refused).rejects.toThrow(IdempotencyConfigError)
    await expect(refused).rejects.toThrow("import idempotency from 'middy-idempotency/event' (whole events, HTTP) or 'middy-idempotency' (every event)")
    expect(called).toBe(false)
    expect(store.records()).toEqual([])
    expect(logger.lines.map((l) => l.level)).toEqual(['error'])
  })

  test("refuses mode: 'event' where it is built", () => {
    expect(() => batchOnly.idempotency({ store: new MemoryStore(), mode: 'event' })).toThrow("mode 'event' needs idempotency from 'middy-idempotency' or 'middy-idempotency/event'")
  })
})

describe("idempotency from 'middy-idempotency/event'", () => {
  test('runs an HTTP request once and replays it, as the main entry does', async () => {
    const store = new MemoryStore()
    let runs = 0
    const handler = middy().use(eventOnly.idempotency({ store, logger: false })).handler(async () => ({ statusCode: 201, body: String(++runs) }))
    const request = { method: 'POST', key: 'k-1', body: '{"amount":5}' }
    expect(await handler(httpApiEvent(request), lambdaContext())).toEqual({ statusCode: 201, body: '1' })
    expect(await handler(httpApiEvent(request), lambdaContext())).toEqual({ statusCode: 201, body: '1', headers: { 'Idempotent-Replayed': 'true' } })
    expect(runs).toBe(1)
  })

  test.each([
    ['SQS', 'sqs', sqsEvent([sqsRecord({ n: 1 })])],
    ['Kinesis', 'kinesis', kinesisEvent([kinesisRecord({ n: 1 })])],
    ['Amazon MSK', 'kafka', mskEvent([kafkaRecord('orders', 0, 1, { n: 1 })])]
  ])('refuses a batch of %s rather than take it as one unit: nothing is claimed, the handler is not called', async (_name, mode, event) => {
    const store = new MemoryStore()
    let called = false
    const handler = middy().use(eventOnly.idempotency({ store, logger: false })).handler(async () => { called = true })
    await expect(handler(event, lambdaContext())).rejects.toThrow(`this is a ${mode} batch: import idempotency and perRecord from 'middy-idempotency/batch'`)
    expect(called).toBe(false)
  })

  test("takes a batch as one unit when mode: 'event' says so", async () => {
    const store = new MemoryStore()
    let runs = 0
    const handler = middy().use(eventOnly.idempotency({ store, logger: false, mode: 'event' })).handler(async () => ++runs)
    const event = sqsEvent([sqsRecord({ n: 1 })])
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
    expect(await handler(structuredClone(event), lambdaContext())).toBe(1)
  })

  test('refuses a batch mode where it is built', () => {
    expect(() => eventOnly.idempotency({ store: new MemoryStore(), mode: 'sqs' })).toThrow("mode 'sqs' needs idempotency from 'middy-idempotency' or 'middy-idempotency/batch'")
  })
})
