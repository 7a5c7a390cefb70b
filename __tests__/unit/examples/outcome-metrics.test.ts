import { describe, expect, test } from '@jest/globals'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { outcomeMetrics } from '../../../examples/sam-app/src/outcome-metrics.js'
import { idempotency, MemoryStore, perRecord } from '../../../src/index.js'
import { lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

interface Emf {
  _aws: { Timestamp: number, CloudWatchMetrics: Array<{ Namespace: string, Dimensions: string[][], Metrics: Array<{ Name: string, Unit: string }> }> }
  [member: string]: unknown
}

describe('the EMF example turns outcomes into CloudWatch metrics', () => {
  test('one EMF line per outcome kind per batch, printed before the invocation answers (an early answer too), so duplicates can be graphed', async () => {
    const lines: string[] = []
    const onOutcome = outcomeMetrics({ namespace: 'Orders', service: 'order-consumer', print: (line) => { lines.push(line) } })
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: new MemoryStore(), namespace: 'emf', logger: false, onOutcome }))
      .handler(perRecord(async (record: SQSRecord) => {
        if (record.body.includes('decline')) throw new Error('declined')
        return 'charged'
      }))
    const first = [sqsRecord({ orderId: 'o-1' }), sqsRecord({ orderId: 'o-2' }), sqsRecord({ orderId: 'decline' })]
    await handler(sqsEvent(first), lambdaContext())
    const byOutcome = (): Record<string, number> => Object.fromEntries(lines.map((l) => JSON.parse(l) as Emf).map((d) => [d.Outcome, d.Units]))
    expect(byOutcome()).toEqual({ completed: 2, failed: 1 })
    lines.length = 0
    await handler(sqsEvent([redelivered(first[0] as SQSRecord), redelivered(first[1] as SQSRecord)]), lambdaContext())
    expect(byOutcome()).toEqual({ replayed: 2 })

    // Each line is a valid EMF document: every metric it declares is a member of the root, within 100 values.
    for (const document of lines.map((l) => JSON.parse(l) as Emf)) {
      const [directive] = document._aws.CloudWatchMetrics
      expect(directive?.Namespace).toBe('Orders')
      for (const dimension of directive?.Dimensions.flat() ?? []) expect(typeof document[dimension]).toBe('string')
      for (const { Name } of directive?.Metrics ?? []) expect(document[Name]).toBeDefined()
      expect((document.DurationMs as number[]).length).toBeLessThanOrEqual(100)
    }
  })
})
