/**
 * An SQS payment consumer made idempotent per record.
 *
 * SQS delivers at least once: a message comes back when an acknowledgement is lost or a
 * visibility timeout runs out, and producers retry too, sending the same payment under a
 * new messageId. Each record is claimed in DynamoDB before the card is charged, so a
 * payment is charged once however many times it arrives; only the records that really
 * failed are handed back to SQS through `batchItemFailures`.
 *
 * The handler is `perRecord`: each payment is stored COMPLETED the moment its own charge
 * ends, so a batch that times out because one charge hangs re-runs that charge only.
 *
 * Deployed by `../template.yaml`. In the middy-idempotency repository, `npm run demo` runs this file against
 * DynamoDB Local through `createHandler`.
 */
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from 'middy-idempotency/batch'
import type { IdempotencyLogger, IdempotencyStore, OutcomeReport } from 'middy-idempotency'
import { DynamoDBStore } from 'middy-idempotency/dynamodb'

/** The message body the payments service sends. */
export interface Payment {
  paymentId: string
  /** In the smallest unit of the currency (cents). */
  amount: number
  currency: string
  cardToken: string
}

/** What the card gateway answers; stored as the record's response and replayed to duplicates. */
export interface Receipt {
  paymentId: string
  chargeId: string
  amount: number
  currency: string
}

/** The card was refused: retrying cannot help, so the outcome is kept (see `onFailure`). */
export class CardDeclinedError extends Error {
  constructor (paymentId: string, reason: string) {
    super(`card declined: ${reason} (payment ${paymentId})`)
    this.name = 'CardDeclinedError'
  }
}

/** What a charge is given besides the payment. */
export interface ChargeOptions {
  /** Middy's signal: aborts when the invocation is about to time out. */
  signal: AbortSignal
  /** The record's stored idempotency key, for the gateway to deduplicate on as well. */
  idempotencyKey?: string
}

export interface ConsumerDependencies {
  store: IdempotencyStore
  /** Charges the card. Throws `CardDeclinedError` for a refusal, anything else for a fault. */
  charge: (payment: Payment, options: ChargeOptions) => Promise<Receipt>
  /**
   * Told of every record reported failed to SQS, when it ran. [nothing: the middleware logs failures,
   * without the body]
   */
  logFailedRecord?: (reason: unknown, record: SQSRecord) => void
  /** Lost leases, store faults and records refused without running. [`console`] */
  logger?: IdempotencyLogger | false
  /**
   * Told what became of each record, with the error when it did not complete (`outcome-metrics.ts`
   * makes metrics of it).
   */
  onOutcome?: (outcome: OutcomeReport) => void
  /** Prefix of the stored keys. [`AWS_LAMBDA_FUNCTION_NAME`] */
  namespace?: string
  /** Middy answers this long before Lambda's deadline, with the records that did not finish. [1000] */
  timeoutEarlyInMillis?: number
}

const parsePayment = (record: SQSRecord): Payment => {
  const payment = JSON.parse(record.body) as Partial<Payment>
  if (typeof payment.paymentId !== 'string' || !Number.isSafeInteger(payment.amount) ||
    typeof payment.currency !== 'string' || typeof payment.cardToken !== 'string') {
    throw new Error(`message ${record.messageId} is not a payment`)
  }
  return payment as Payment
}

export const createHandler = ({
  store, charge, logFailedRecord, logger, onOutcome, namespace, timeoutEarlyInMillis = 1000
}: ConsumerDependencies) => {
  // Early enough to write what became of every record and answer before Lambda's deadline.
  return middy<SQSEvent>({ timeoutEarlyInMillis })
    // First in the chain, so its `after` runs last: it turns the per-record results that
    // idempotency puts back together into Lambda's `{ batchItemFailures }`.
    // Its default logger prints every failed record, body included: the middleware logs failures without it.
    .use(sqsPartialBatchFailure({ logger: logFailedRecord ?? (() => {}) }))
    .use(idempotency({
      store,
      // A producer that retries sends the same payment under a new messageId: the payment id
      // is what must happen once. The body (the default `payload`) must match too, so a
      // payment id reused for another amount is refused instead of being answered with the
      // first receipt.
      key: 'body.paymentId',
      // A gateway fault is transient: forget the attempt so that SQS's redelivery charges.
      // A declined card stays declined: keep it FAILED so redeliveries do not hit the
      // gateway again, and let SQS move the message to the dead-letter queue.
      onFailure: (error) => error instanceof CardDeclinedError ? 'fail' : 'delete',
      // Receipts protect for a day; SQS's retention and the producer's retries end well before.
      expiresAfterSeconds: 24 * 3600,
      // A timeout is recognised this close to the deadline: the running charges keep their leases.
      timeoutMarginMs: timeoutEarlyInMillis,
      ...(namespace === undefined ? {} : { namespace }),
      ...(logger === undefined ? {} : { logger }),
      ...(onOutcome === undefined ? {} : { onOutcome })
    }))
    // One charge per record, each stored the moment it ends. The signal lets a charge stop
    // waiting when Middy is about to answer; the key lets the gateway refuse a second charge.
    .handler(perRecord(async (record: SQSRecord, { signal, key }) =>
      await charge(parsePayment(record), { signal, ...(key === undefined ? {} : { idempotencyKey: key }) })))
}

/**
 * The card gateway of the deployed function. It also gets the record's idempotency key as its
 * own (a hash: no payment data in a header): if our record is lost (it expired, or the table
 * was restored), the gateway still refuses a second charge. The signal aborts the wait when
 * Middy times out; the payment is then released and charged again on the redelivery, under
 * the same key, which the gateway answers with the first charge. (redis-consumer.ts uses it too.)
 */
export const chargeWithGateway = async (
  payment: Payment,
  { signal, idempotencyKey }: ChargeOptions
): Promise<Receipt> => {
  const response = await fetch(`${process.env.CARD_GATEWAY_URL ?? 'https://gateway.invalid'}/charges`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey ?? payment.paymentId },
    body: JSON.stringify({ amount: payment.amount, currency: payment.currency, source: payment.cardToken })
  })
  const answer = await response.json() as { id?: string, declineReason?: string }
  if (response.status === 402) throw new CardDeclinedError(payment.paymentId, answer.declineReason ?? 'refused')
  if (!response.ok || typeof answer.id !== 'string') throw new Error(`card gateway answered ${response.status}`)
  return { paymentId: payment.paymentId, chargeId: answer.id, amount: payment.amount, currency: payment.currency }
}

export const handler = createHandler({
  store: new DynamoDBStore({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore' }),
  charge: chargeWithGateway
})
