import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'

let sequence = 0

/** An SQS record as Lambda delivers it. `body` objects are JSON-encoded. */
export const sqsRecord = (body: unknown, overrides: { messageId?: string, receiveCount?: number, groupId?: string, fifo?: boolean } = {}): SQSRecord => {
  const messageId = overrides.messageId ?? `msg-${++sequence}-${Math.random().toString(36).slice(2, 8)}`
  const fifo = overrides.fifo ?? overrides.groupId !== undefined
  return {
    messageId,
    receiptHandle: `receipt-${messageId}-${Math.random().toString(36).slice(2)}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: String(overrides.receiveCount ?? 1),
      SentTimestamp: String(Date.now()),
      SenderId: 'AIDATEST',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
      ...(overrides.groupId === undefined ? {} : { MessageGroupId: overrides.groupId, MessageDeduplicationId: messageId, SequenceNumber: String(sequence) })
    },
    messageAttributes: {},
    md5OfBody: 'md5',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:orders${fifo ? '.fifo' : ''}`,
    awsRegion: 'us-east-1'
  }
}

/** The same message delivered again: same messageId and body, new receipt handle, one more receive. */
export const redelivered = (record: SQSRecord): SQSRecord => ({
  ...record,
  receiptHandle: `receipt-${record.messageId}-${Math.random().toString(36).slice(2)}`,
  attributes: { ...record.attributes, ApproximateReceiveCount: String(Number(record.attributes.ApproximateReceiveCount) + 1) }
})

export const sqsEvent = (records: SQSRecord[]): SQSEvent => ({ Records: records })

/** A Lambda context whose remaining time is fixed (or computed from a deadline). */
export const lambdaContext = (remainingMs: number | (() => number) = 30_000, functionName = 'orders-consumer'): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
  memoryLimitInMB: '128',
  awsRequestId: `req-${Math.random().toString(36).slice(2)}`,
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'stream',
  getRemainingTimeInMillis: typeof remainingMs === 'function' ? remainingMs : () => remainingMs,
  done: () => {},
  fail: () => {},
  succeed: () => {}
})

/** The messageIds a `{ batchItemFailures }` response reports. */
export const failedIds = (response: unknown): string[] =>
  ((response as { batchItemFailures: Array<{ itemIdentifier: string }> }).batchItemFailures).map((f) => f.itemIdentifier)

/** A logger that keeps what it is told, for assertions (and keeps test output quiet). */
export const recordingLogger = () => {
  const lines: Array<{ level: 'warn' | 'error', entry: unknown }> = []
  return {
    lines,
    warn: (entry: unknown) => { lines.push({ level: 'warn', entry }) },
    error: (entry: unknown) => { lines.push({ level: 'error', entry }) }
  }
}
