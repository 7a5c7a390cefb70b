/**
 * SQS batches for each workload, shaped as Lambda delivers them. A redelivery is the same
 * message again: same messageId and body, a new receipt handle, ApproximateReceiveCount 2.
 */
import { randomUUID } from 'node:crypto'
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'

export type Workload = 'all new' | 'all duplicates' | 'half and half' | 'in-batch duplicates'
export const WORKLOADS: Workload[] = ['all new', 'all duplicates', 'half and half', 'in-batch duplicates']

let sequence = 0

const message = (orderId: string): SQSRecord => {
  const messageId = randomUUID()
  const now = String(Date.now())
  return {
    messageId,
    receiptHandle: `rh-${messageId}-1`,
    body: JSON.stringify({ orderId, amount: 1250, currency: 'EUR', customer: `c-${sequence % 97}` }),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: now, SenderId: 'AIDABENCH', ApproximateFirstReceiveTimestamp: now },
    messageAttributes: {},
    md5OfBody: 'not-checked',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders',
    awsRegion: 'us-east-1'
  }
}

const fresh = (count: number): SQSRecord[] => Array.from({ length: count }, () => message(`order-${++sequence}`))

export const redelivered = (record: SQSRecord): SQSRecord => ({
  ...record,
  receiptHandle: `rh-${record.messageId}-2`,
  attributes: { ...record.attributes, ApproximateReceiveCount: '2' }
})

/** What one round of a workload delivers: `setup` first (not timed), then `timed`. */
export interface Round { setup?: SQSEvent, timed: SQSEvent, keyOnBody: boolean }

export const roundOf = (workload: Workload, size: number): Round => {
  switch (workload) {
    case 'all new':
      return { timed: { Records: fresh(size) }, keyOnBody: false }
    case 'all duplicates': {
      const originals = fresh(size)
      return { setup: { Records: originals }, timed: { Records: originals.map(redelivered) }, keyOnBody: false }
    }
    case 'half and half': {
      const originals = fresh(Math.floor(size / 2))
      const news = fresh(size - originals.length)
      // Alternate, as a partly failed batch mixed with new messages would arrive.
      const mixed = news.flatMap((record, i) => originals[i] === undefined ? [record] : [redelivered(originals[i] as SQSRecord), record])
      return { setup: { Records: originals }, timed: { Records: mixed }, keyOnBody: false }
    }
    case 'in-batch duplicates': {
      // A producer that retried: every order twice, under two messageIds, in the same batch.
      const firsts = fresh(Math.ceil(size / 2))
      const copies = firsts.slice(0, size - firsts.length).map((record) => ({ ...message(JSON.parse(record.body).orderId), body: record.body }))
      return { timed: { Records: [...firsts, ...copies] }, keyOnBody: true }
    }
  }
}

/** A Lambda context with a fixed remaining time (the lease both implementations take). */
export const lambdaContext = (functionName: string): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
  memoryLimitInMB: '1024',
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 60_000,
  done: () => {},
  fail: () => {},
  succeed: () => {}
})
