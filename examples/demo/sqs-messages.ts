import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'
import type { Payment } from '../sam-app/src/sqs-consumer.js'

const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:payments'
let messages = 0

/** A payment as SQS first delivers it, under a new messageId. */
export const message = (payment: Payment): SQSRecord => {
  const messageId = `msg-${String(++messages).padStart(2, '0')}`
  const now = String(Date.now())
  return {
    messageId,
    receiptHandle: `${messageId}-receipt-1`,
    body: JSON.stringify(payment),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: now,
      SenderId: 'AIDAPAYMENTSSERVICE',
      ApproximateFirstReceiveTimestamp: now
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: QUEUE_ARN,
    awsRegion: 'eu-west-1'
  }
}

/** The same message delivered again: one more receive, a new receipt handle. */
export const redelivery = (record: SQSRecord): SQSRecord => {
  const count = Number(record.attributes.ApproximateReceiveCount) + 1
  return {
    ...record,
    receiptHandle: `${record.messageId}-receipt-${count}`,
    attributes: { ...record.attributes, ApproximateReceiveCount: String(count) }
  }
}

export const batch = (records: SQSRecord[]): SQSEvent => ({ Records: records })

/** A Lambda context for a function with a 30-second timeout (or `timeoutMs`), invoked now. */
export const lambdaContext = (timeoutMs = 30_000): Context => {
  const deadline = Date.now() + timeoutMs
  const requestId = `req-${Math.random().toString(36).slice(2, 10)}`
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'payments-consumer',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:payments-consumer',
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/payments-consumer',
    logStreamName: requestId,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {}
  }
}
