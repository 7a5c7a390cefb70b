/**
 * A Kafka consumer (Amazon MSK or self-managed Apache Kafka) made idempotent per record:
 * payments charged through a card gateway, where a duplicate is a double charge.
 *
 * Lambda reads each topic-partition in order and, when a record is reported failed, resumes
 * that partition from its offset: the records after it come back even if they had been
 * charged. So:
 * - each record is claimed and completed on its own (`perRecord`), keyed by its payment id
 *   (`value.paymentId`, read from the base64 value: producer retries share it), so a charged
 *   payment replays instead of being charged again;
 * - a failure holds back the later records of its partition (reported failed with it, run on
 *   the retry, in order), while other partitions go on.
 * The middleware answers Lambda's `{ batchItemFailures: [{ itemIdentifier: { partition, offset } }] }`
 * itself; turn on `ReportBatchItemFailures` on the event source mapping (see the template).
 */
import middy from '@middy/core'
import type { MSKEvent, MSKRecord } from 'aws-lambda'
import { idempotency, perRecord } from 'middy-idempotency/batch'
import type { IdempotencyLogger, IdempotencyStore } from 'middy-idempotency'
import { DynamoDBStore } from 'middy-idempotency/dynamodb'

/** What the checkout service produces to the `payments` topic. */
export interface Payment { paymentId: string, amount: number, currency: string, cardToken: string }

export interface KafkaConsumerDependencies {
  store: IdempotencyStore
  /** Charges one payment; throws when the gateway refuses it or cannot be reached. */
  charge: (payment: Payment, options: { signal: AbortSignal, idempotencyKey?: string }) => Promise<{ chargeId: string }>
  logger?: IdempotencyLogger | false
  namespace?: string
}

/** Kafka delivers `value` base64-encoded, as the producer wrote it. */
export const paymentOf = (record: MSKRecord): Payment =>
  JSON.parse(Buffer.from(record.value, 'base64').toString('utf8')) as Payment

export const createHandler = ({ store, charge, logger, namespace }: KafkaConsumerDependencies) =>
  middy<MSKEvent>({ timeoutEarlyInMillis: 1000 })
    .use(idempotency({
      store,
      key: 'value.paymentId',
      timeoutMarginMs: 1000,
      ...(namespace === undefined ? {} : { namespace }),
      ...(logger === undefined ? {} : { logger })
    }))
    .handler(perRecord(async (record: MSKRecord, { signal, key }) =>
      await charge(paymentOf(record), { signal, ...(key === undefined ? {} : { idempotencyKey: key }) })))

const chargeWithGateway: KafkaConsumerDependencies['charge'] = async (payment, { signal, idempotencyKey }) => {
  const response = await fetch(`${process.env.CARD_GATEWAY_URL ?? 'https://gateway.invalid'}/charges`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey ?? payment.paymentId },
    body: JSON.stringify({ amount: payment.amount, currency: payment.currency, source: payment.cardToken })
  })
  const body = await response.json() as { id?: string }
  if (!response.ok || typeof body.id !== 'string') throw new Error(`card gateway answered ${response.status}`)
  return { chargeId: body.id }
}

export const handler = createHandler({
  store: new DynamoDBStore({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore' }),
  charge: chargeWithGateway
})
