import { describe, expect, test } from '@jest/globals'
import type { SQSRecord } from 'aws-lambda'
// By name, as the example app and its users import it (tsconfig paths, jest moduleNameMapper).
import { MemoryStore } from 'middy-idempotency'
import { CardDeclinedError, createHandler, type Payment, type Receipt } from '../../../examples/sam-app/src/sqs-consumer.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../../support/sqs.js'

describe('the example app\'s SQS payments consumer (examples/sam-app/src/sqs-consumer.ts)', () => {
  test('charges each payment once across a redelivered batch and keeps a declined card refused without asking the gateway again', async () => {
    const attempts = new Map<string, number>()
    const charge = async (payment: Payment): Promise<Receipt> => {
      attempts.set(payment.paymentId, (attempts.get(payment.paymentId) ?? 0) + 1)
      if (payment.cardToken === 'tok_declined') throw new CardDeclinedError(payment.paymentId, 'insufficient funds')
      return { paymentId: payment.paymentId, chargeId: `ch-${payment.paymentId}`, amount: payment.amount, currency: payment.currency }
    }
    const handler = createHandler({ store: new MemoryStore(), charge, logger: false, logFailedRecord: () => {}, namespace: 'payments' })
    const payment = (id: string, cardToken = 'tok_visa'): SQSRecord => sqsRecord({ paymentId: id, amount: 1000, currency: 'EUR', cardToken })
    const batch = [payment('pay-1'), payment('pay-2'), payment('pay-3', 'tok_declined')]

    const first = await handler(sqsEvent(batch), lambdaContext())
    expect(failedIds(first)).toEqual([batch[2]?.messageId])

    const again = await handler(sqsEvent(batch.map(redelivered)), lambdaContext())
    expect(failedIds(again)).toEqual([batch[2]?.messageId])
    expect(Object.fromEntries(attempts)).toEqual({ 'pay-1': 1, 'pay-2': 1, 'pay-3': 1 })
  })
})
