import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import eventNormalizer from '@middy/event-normalizer'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import * as everyEvent from '../../../src/index.js'
import * as batchOnly from '../../../src/batch.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'
import { integrationStores, type StoreUnderTest } from '../../support/stores.js'

const uid = (): string => Math.random().toString(36).slice(2, 10)

// The README's stacks with the idempotency of each entry point that takes SQS batches.
const entries: Array<[string, Pick<typeof everyEvent, 'idempotency' | 'perRecord'>]> = [['middy-idempotency', everyEvent], ['middy-idempotency/batch', batchOnly]]

describe.each(entries)('idempotency from %s', (_entry, { idempotency, perRecord }) => {
  describe.each(integrationStores)('on %s', (_store, open) => {
    let backend: StoreUnderTest
    beforeAll(async () => { backend = await open() })
    afterAll(async () => { await backend.close() })
    const itemsOf = async (namespace: string) => await backend.records(namespace)

    describe.each(batchMiddyVersions)('an SQS perRecord consumer in the stacks users build, %s', (_name, middy, { inputOutputLogger, warmup }) => {
      test('@middy/event-normalizer before us parses each body: the key path reads it, a redelivery replays, a producer duplicate too', async () => {
        const namespace = `normalized-${uid()}`
        const charged: string[] = []
        const handler = middy<SQSEvent>()
          .use(eventNormalizer())
          .use(sqsPartialBatchFailure({ logger: false as never }))
          .use(idempotency({ store: backend.store, namespace, key: 'body.paymentId', logger: false }))
          .handler(perRecord(async (record: SQSRecord) => {
            // The normalizer has parsed the body into an object by now.
            const { paymentId } = record.body as unknown as { paymentId: string }
            charged.push(paymentId)
            return paymentId
          }))
        const records = [sqsRecord({ paymentId: 'p-1', amount: 5 }), sqsRecord({ paymentId: 'p-2', amount: 7 })]
        expect(await handler(sqsEvent(records.map((r) => structuredClone(r))), lambdaContext())).toEqual({ batchItemFailures: [] })
        expect(await handler(sqsEvent(records.map(redelivered)), lambdaContext())).toEqual({ batchItemFailures: [] })
        expect(await handler(sqsEvent([sqsRecord({ paymentId: 'p-1', amount: 5 })]), lambdaContext())).toEqual({ batchItemFailures: [] })
        expect(charged).toEqual(['p-1', 'p-2'])
        expect((await itemsOf(namespace)).map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED'])
      })

      test('@middy/warmup before us: a warmup invocation returns before us, nothing is claimed, the handler is not called', async () => {
        const namespace = `warmup-${uid()}`
        let calls = 0
        const handler = middy<SQSEvent>()
          .use(warmup())
          .use(sqsPartialBatchFailure({ logger: false as never }))
          .use(idempotency({ store: backend.store, namespace, logger: false }))
          .handler(perRecord(async () => { calls++ }))
        expect(await handler({ source: 'serverless-plugin-warmup' } as unknown as SQSEvent, lambdaContext())).toBe('warmup')
        expect(calls).toBe(0)
        expect(await itemsOf(namespace)).toEqual([])
      })

      test('@middy/input-output-logger outermost logs the delivered batch and the final answer', async () => {
        const namespace = `logged-${uid()}`
        const logged: Array<{ event?: SQSEvent, response?: unknown }> = []
        const handler = middy<SQSEvent>()
          .use(inputOutputLogger({ logger: (entry: unknown) => { logged.push(entry as { event?: SQSEvent, response?: unknown }) } }))
          .use(sqsPartialBatchFailure({ logger: false as never }))
          .use(idempotency({ store: backend.store, namespace, logger: false }))
          .handler(perRecord(async (record: SQSRecord) => { if (record.body === 'declined') throw new Error('declined'); return 'ok' }))
        const records = [sqsRecord('fine'), sqsRecord('declined')]
        const answer = await handler(sqsEvent(records), lambdaContext())
        expect(failedIds(answer)).toEqual([records[1]?.messageId])
        expect(logged[0]?.event?.Records.map((r) => r.messageId)).toEqual(records.map((r) => r.messageId))
        expect(logged.at(-1)?.response).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]?.messageId }] })
      })
    })
  })
})
