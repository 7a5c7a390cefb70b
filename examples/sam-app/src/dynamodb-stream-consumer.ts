/**
 * A DynamoDB Streams consumer made idempotent per record: each order placed in the Orders
 * table (by `order-consumer.ts`) is sent to the warehouse to be picked, once.
 *
 * Lambda reads the table's stream in batches and, when a record fails, resumes from the
 * lowest sequence number reported failed, so records that had been handled come back. Each
 * record is claimed and completed on its own (`perRecord`; the default key, the record's
 * `eventID`, is unique per change), so those replay instead of sending a second pick request.
 * The changes of one item (its `Keys`) are handled in order: a failure holds back the later
 * changes of that order only. `idempotency` answers Lambda's `{ batchItemFailures }` itself.
 *
 * Deployed by `../template.yaml`.
 */
import middy from '@middy/core'
import type { AttributeValue, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda'
import { idempotency, perRecord } from 'middy-idempotency/batch'
import type { IdempotencyLogger, IdempotencyStore } from 'middy-idempotency'
import { DynamoDBStore } from 'middy-idempotency/dynamodb'

/** What the warehouse is asked to do for a placed order. */
export interface PickRequest {
  orderId: string
  sku: string
  quantity: number
}

/** The warehouse's answer; stored, and replayed when the record comes back. */
export type Handled = { orderId: string, pickTicket: string } | { skipped: string }

export interface PickOptions {
  /** Middy's signal: aborts when the invocation is about to time out. */
  signal: AbortSignal
  /** The record's stored idempotency key, for the warehouse to deduplicate on as well. */
  idempotencyKey?: string
}

export interface StreamConsumerDependencies {
  store: IdempotencyStore
  /** Asks the warehouse to pick an order; throws when it cannot be reached. */
  pick: (request: PickRequest, options: PickOptions) => Promise<{ pickTicket: string }>
  /** Lost leases, store faults and records reported failed. [`console`] */
  logger?: IdempotencyLogger | false
  /** Prefix of the stored keys. [`AWS_LAMBDA_FUNCTION_NAME`] */
  namespace?: string
}

/**
 * The placed order in an INSERT's new image, which the stream delivers marshalled
 * (`{ S: ... }`, `{ N: ... }`). `@middy/event-normalizer`, used before `idempotency`, would
 * unmarshall it instead; either way is hashed the same on every delivery.
 */
export const pickRequestOf = (record: DynamoDBRecord): PickRequest | undefined => {
  const image: Record<string, AttributeValue> | undefined = record.dynamodb?.NewImage
  if (record.eventName !== 'INSERT' || image?.status?.S !== 'PLACED') return undefined
  const orderId = image.orderId?.S
  const sku = image.sku?.S
  const quantity = Number(image.quantity?.N)
  if (orderId === undefined || sku === undefined || !Number.isSafeInteger(quantity)) {
    throw new Error(`stream record ${record.dynamodb?.SequenceNumber} is not a placed order`)
  }
  return { orderId, sku, quantity }
}

export const createHandler = ({ store, pick, logger, namespace }: StreamConsumerDependencies) =>
  middy<DynamoDBStreamEvent>({ timeoutEarlyInMillis: 1000 })
    // Defaults: key `eventID`, payload `dynamodb`; the ordering group is the item's `Keys`.
    .use(idempotency({
      store,
      timeoutMarginMs: 1000,
      ...(namespace === undefined ? {} : { namespace }),
      ...(logger === undefined ? {} : { logger })
    }))
    .handler(perRecord(async (record: DynamoDBRecord, { signal, key }): Promise<Handled> => {
      const request = pickRequestOf(record)
      // Updates and deletes of orders are not the warehouse's business here; they complete too,
      // so that a retry of the batch does not look at them again.
      if (request === undefined) {
        return { skipped: `${record.eventName ?? 'change'} ${record.dynamodb?.SequenceNumber ?? ''}`.trim() }
      }
      const { pickTicket } = await pick(request, { signal, ...(key === undefined ? {} : { idempotencyKey: key }) })
      return { orderId: request.orderId, pickTicket }
    }))

/** The warehouse service of the deployed function. */
const pickAtWarehouse = async (
  request: PickRequest,
  { signal, idempotencyKey }: PickOptions
): Promise<{ pickTicket: string }> => {
  const response = await fetch(`${process.env.WAREHOUSE_URL ?? 'https://warehouse.invalid'}/picks`, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey })
    },
    body: JSON.stringify(request)
  })
  const answer = await response.json() as { ticket?: string }
  if (!response.ok || typeof answer.ticket !== 'string') throw new Error(`warehouse answered ${response.status}`)
  return { pickTicket: answer.ticket }
}

export const handler = createHandler({
  store: new DynamoDBStore({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore' }),
  pick: pickAtWarehouse
})
