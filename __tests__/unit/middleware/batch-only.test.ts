import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import { IdempotencyConfigError, MemoryStore } from '../../../src/index.js'
import * as batchOnly from '../../../src/batch.js'
import { lambdaContext, sqsRecord } from '../../support/sqs.js'

describe("idempotency from 'middy-idempotency/batch' on batches no entry takes per record", () => {
  // 'middy-idempotency/event' refuses these too: sending the user there would go round in a circle.
  test.each([
    ['an EventBridge Pipes batch of sqs records', [sqsRecord({ n: 1 }), sqsRecord({ n: 2 })]],
    ['an Amazon MQ batch', { eventSource: 'aws:mq', eventSourceArn: 'arn:aws:mq:us-east-1:123456789012:broker:b:b-1', messages: [{ messageID: 'ID:1', data: 'e30=' }] }],
    ['a DocumentDB change stream batch', { eventSource: 'aws:docdb', eventSourceArn: 'arn:aws:rds:us-east-1:123456789012:cluster:c', events: [{ event: { _id: { _data: '1' } } }] }]
  ])('refuses %s naming what takes it, not the whole-event entry', async (named, event) => {
    const store = new MemoryStore()
    let called = false
    const handler = middy().use(batchOnly.idempotency({ store, logger: false })).handler(async () => { called = true })
    const refused = handler(event, lambdaContext())
    await expect(refused).rejects.toThrow(IdempotencyConfigError)
    await expect(refused).rejects.toThrow(`this is ${named}, which no idempotency middleware takes per record: run each record through makeIdempotent() from 'middy-idempotency'`)
    expect(called).toBe(false)
    expect(store.records()).toEqual([])
  })
})
