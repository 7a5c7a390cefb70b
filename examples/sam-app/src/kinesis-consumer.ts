/**
 * A Kinesis consumer made idempotent per record: account movements posted to a ledger.
 *
 * The movements of an account share its partition key, and must be posted in order. Lambda
 * reads a shard in batches and, when a record fails, resumes from the lowest sequence number
 * reported failed: the records after it come back even if they had been posted. So:
 * - each record is claimed and completed on its own (`perRecord`; the default key, the
 *   record's `eventID`, is unique per record of a stream), and posted records replay instead
 *   of being posted twice;
 * - a failure holds back the later records of its partition key (they are reported failed
 *   with it, and run on the retry, in order), while other accounts go on.
 * Middy has no partial-batch middleware for streams: `idempotency` answers Lambda's
 * `{ batchItemFailures }` itself.
 *
 * Deployed by `../template.yaml`. In the middy-idempotency repository, `npm run demo` runs this file against DynamoDB
 * Local through `createHandler`.
 */
import middy from '@middy/core'
import type { KinesisStreamEvent, KinesisStreamRecord } from 'aws-lambda'
import { idempotency, perRecord } from 'middy-idempotency/batch'
import type { IdempotencyLogger, IdempotencyStore } from 'middy-idempotency'
import { DynamoDBStore } from 'middy-idempotency/dynamodb'

/** What the accounts service puts on the stream, partition key `accountId`. */
export interface Movement {
  movementId: string
  accountId: string
  /** Smallest currency unit; negative for a debit. */
  amount: number
}

/** What the ledger answers; stored, and replayed when the record comes back. */
export interface Posting {
  movementId: string
  entryId: string
  balance: number
}

export interface LedgerOptions {
  /** Middy's signal: aborts when the invocation is about to time out. */
  signal: AbortSignal
  /** The record's stored idempotency key, for the ledger to deduplicate on as well. */
  idempotencyKey?: string
}

export interface KinesisConsumerDependencies {
  store: IdempotencyStore
  /** Posts one movement; throws when the ledger refuses it or cannot be reached. */
  post: (movement: Movement, options: LedgerOptions) => Promise<Posting>
  /** Lost leases, store faults and records reported failed. [`console`] */
  logger?: IdempotencyLogger | false
  /** Prefix of the stored keys. [`AWS_LAMBDA_FUNCTION_NAME`] */
  namespace?: string
}

/** Kinesis delivers `data` base64-encoded, as the producer put it. */
export const movementOf = (record: KinesisStreamRecord): Movement =>
  JSON.parse(Buffer.from(record.kinesis.data, 'base64').toString('utf8')) as Movement

export const createHandler = ({ store, post, logger, namespace }: KinesisConsumerDependencies) =>
  middy<KinesisStreamEvent>({ timeoutEarlyInMillis: 1000 })
    // Defaults: key `eventID`, payload `kinesis.data`. Streams count no deliveries, so an
    // onFailure function would always see `attempt` 1: retries are bounded by the event
    // source mapping's MaximumRetryAttempts instead (see the template).
    .use(idempotency({
      store,
      timeoutMarginMs: 1000,
      ...(namespace === undefined ? {} : { namespace }),
      ...(logger === undefined ? {} : { logger })
    }))
    .handler(perRecord(async (record: KinesisStreamRecord, { signal, key }) =>
      await post(movementOf(record), { signal, ...(key === undefined ? {} : { idempotencyKey: key }) })))

/** The ledger service of the deployed function. */
const postToLedger = async (movement: Movement, { signal, idempotencyKey }: LedgerOptions): Promise<Posting> => {
  const ledgerUrl = process.env.LEDGER_URL ?? 'https://ledger.invalid'
  const response = await fetch(`${ledgerUrl}/accounts/${encodeURIComponent(movement.accountId)}/entries`, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey })
    },
    body: JSON.stringify({ reference: movement.movementId, amount: movement.amount })
  })
  const answer = await response.json() as { id?: string, balance?: number }
  if (!response.ok || typeof answer.id !== 'string' || typeof answer.balance !== 'number') {
    throw new Error(`ledger answered ${response.status}`)
  }
  return { movementId: movement.movementId, entryId: answer.id, balance: answer.balance }
}

export const handler = createHandler({
  store: new DynamoDBStore({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore' }),
  post: postToLedger
})
