import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import type { MSKEvent } from 'aws-lambda'
import { idempotency } from '../../../src/index.js'
import { freshTable, freshNamespace } from '../../support/dynamodb.js'
import { kafkaRecord, mskEvent } from '../../support/kafka.js'
import { batchMiddyVersions } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

const statusesOf = async (namespace: string): Promise<unknown[]> => await table.statusesOf(namespace)

type Invoke = (event: unknown, context: unknown) => Promise<unknown>
const fresh = freshNamespace

describe.each(batchMiddyVersions)('reading a hand-written handler\'s answer on DynamoDB Local, %s', (_name, middy) => {
  test('a hand-written Kafka handler reports its own { partition, offset } in batchItemFailures: that record is not stored COMPLETED, and is reported failed', async () => {
    const namespace = fresh('kafka-answer')
    const records = [kafkaRecord('payments', 0, 5, { paymentId: 'p5' }), kafkaRecord('payments', 0, 6, { paymentId: 'p6' })]
    const handler = middy<MSKEvent>()
      .use(idempotency({ store: table.store, namespace, onFailure: 'fail', logger: recordingLogger() }))
      .handler(async (event: MSKEvent) => {
        const failed = Object.values(event.records).flat().filter((r) => r.offset === 6)
        // Built afresh, as a handler does: equal by value to the one Lambda expects, never the same object.
        return { batchItemFailures: failed.map((r) => ({ itemIdentifier: { partition: `${r.topic}-${r.partition}`, offset: r.offset } })) }
      })
    const answer = await (handler as unknown as Invoke)(mskEvent(records), lambdaContext()) as { batchItemFailures: unknown[] }
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: { partition: 'payments-0', offset: 6 } }])
    expect((await statusesOf(namespace)).sort()).toEqual(['COMPLETED', 'FAILED'])
  })
})
