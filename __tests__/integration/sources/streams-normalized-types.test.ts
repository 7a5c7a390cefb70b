import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import eventNormalizer from '@middy/event-normalizer'
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda'
import { idempotency, perRecord } from '../../../src/index.js'
import { freshTable } from '../../support/dynamodb.js'
import { batchMiddyVersions } from '../../support/middy.js'
import { lambdaContext, recordingLogger } from '../../support/sqs.js'

type Table = Awaited<ReturnType<typeof freshTable>>
let table: Table
beforeAll(async () => { table = await freshTable() })
afterAll(async () => { await table.drop() })

let sequence = 7000000000000000000n
/** A DynamoDB Streams record whose image holds every attribute type: SS, NS, BS, B, L, M. */
const recordWithSets = (id: string, tags: string[]): DynamoDBRecord => {
  const SequenceNumber = String(++sequence)
  const image = {
    id: { S: id }, tags: { SS: tags }, sizes: { NS: ['1', '2'] }, blobs: { BS: ['AQ=='] }, raw: { B: 'CQ==' },
    lines: { L: [{ S: 'a' }, { N: '3' }] }, address: { M: { city: { S: 'Lyon' } } }
  }
  return {
    eventID: SequenceNumber.slice(-12), eventName: 'INSERT', eventVersion: '1.1', eventSource: 'aws:dynamodb', awsRegion: 'us-east-1',
    dynamodb: { Keys: { id: { S: id } }, NewImage: image as never, SequenceNumber, SizeBytes: 60, StreamViewType: 'NEW_IMAGE' },
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/Orders/stream/2026-11-24T00:00:00.000'
  }
}

describe.each(batchMiddyVersions)('DynamoDB Streams behind @middy/event-normalizer with set attributes, %s', (_name, middy) => {
  test('the default payload (SS, NS, BS become Sets) hashes: every record runs, none fails with IdempotencyKeyError, a retry replays', async () => {
    const runs: string[] = []
    const failures: unknown[] = []
    const handler = middy<DynamoDBStreamEvent>()
      .use(eventNormalizer())
      .use(idempotency({ store: table.store, namespace: `sets-${Math.random()}`, logger: recordingLogger(), onOutcome: (o) => { if (o.error !== undefined) failures.push(o.error) } }))
      .handler(perRecord(async (record: DynamoDBRecord) => { runs.push(String((record.dynamodb?.NewImage as { id?: unknown })?.id)) }))
    const invoke = handler as unknown as (e: unknown, c: unknown) => Promise<{ batchItemFailures: unknown[] }>
    // The normalizer rewrites records in place: each delivery is a fresh copy of the same records.
    const delivered = [recordWithSets('o-1', ['b', 'a']), recordWithSets('o-2', ['c'])]
    expect((await invoke({ Records: structuredClone(delivered) }, lambdaContext())).batchItemFailures).toEqual([])
    expect(failures).toEqual([])
    expect(runs).toEqual(['o-1', 'o-2'])
    // Lambda retries the same batch: replayed, not run again.
    expect((await invoke({ Records: structuredClone(delivered) }, lambdaContext())).batchItemFailures).toEqual([])
    expect(runs).toEqual(['o-1', 'o-2'])
  })

  test('a key path that reads into a set attribute works', async () => {
    const handler = middy<DynamoDBStreamEvent>()
      .use(eventNormalizer())
      .use(idempotency({ store: table.store, namespace: `sets-path-${Math.random()}`, key: 'dynamodb.NewImage.tags', logger: recordingLogger() }))
      .handler(perRecord(async () => 'ok'))
    const response = await (handler as unknown as (e: unknown, c: unknown) => Promise<{ batchItemFailures: unknown[] }>)({ Records: [recordWithSets('o-3', ['x', 'y'])] }, lambdaContext())
    expect(response.batchItemFailures).toEqual([])
  })
})
