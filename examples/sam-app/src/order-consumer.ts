/**
 * An SQS order consumer whose effects are DynamoDB writes, committed exactly once with `transact`.
 *
 * Placing an order is two writes: the order itself, and a reservation of its units in the stock
 * table, which must not go below zero. Both are queued with `transact` and commit in one
 * `TransactWriteItems` together with the record's completion: either the order, the
 * reservation and COMPLETED all land, or none does. A redelivery of a placed order replays its
 * stored answer without writing anything; an order for stock that is not there is refused by
 * its condition, with nothing written.
 *
 * Cost: a transaction writes each item twice (2 write units per KB instead of 1).
 *
 * Deployed by `../template.yaml`. In the middy-idempotency repository, `npm run demo` runs this file against DynamoDB
 * Local through `createHandler`.
 */
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from 'middy-idempotency/batch'
import {
  IdempotencyTransactError, type IdempotencyLogger, type IdempotencyStore, type OutcomeReport
} from 'middy-idempotency'
import { DynamoDBStore, transactions, type TransactItem } from 'middy-idempotency/dynamodb'

/** The message body the shop sends when a customer checks out. */
export interface Order {
  orderId: string
  customerId: string
  sku: string
  quantity: number
}

/** What the consumer answers for a placed order; stored, and replayed to duplicates. */
export interface PlacedOrder {
  orderId: string
  sku: string
  quantity: number
  placedAt: string
}

export interface OrderConsumerDependencies {
  /**
   * A `DynamoDBStore` built with `transactions`: `transact` commits through it (a `MemoryStore`
   * refuses `transact`).
   */
  store: IdempotencyStore
  /** Orders, by `orderId` (S). */
  ordersTable: string
  /** Stock, by `sku` (S), with numbers `available` and `reserved`. */
  stockTable: string
  /**
   * Told of every record reported failed to SQS, when it ran. [nothing: the middleware logs failures,
   * without the body]
   */
  logFailedRecord?: (reason: unknown, record: SQSRecord) => void
  /** Lost leases, store faults and records refused without running. [`console`] */
  logger?: IdempotencyLogger | false
  /** Told what became of each record, with the error when it did not complete. */
  onOutcome?: (outcome: OutcomeReport) => void
  /** Prefix of the stored keys. [`AWS_LAMBDA_FUNCTION_NAME`] */
  namespace?: string
  /** The clock of `placedAt`. [`Date.now`] */
  now?: () => number
}

const parseOrder = (record: SQSRecord): Order => {
  const order = JSON.parse(record.body) as Partial<Order>
  if (typeof order.orderId !== 'string' || typeof order.customerId !== 'string' || typeof order.sku !== 'string' ||
    !Number.isSafeInteger(order.quantity) || (order.quantity as number) <= 0) {
    throw new Error(`message ${record.messageId} is not an order`)
  }
  return order as Order
}

/**
 * The two writes of an order, as `TransactWriteItems` entries with native values. Entry 0
 * refuses an order id that exists already; entry 1 refuses a reservation the stock cannot
 * cover (a sku that is not stocked has no `available`, so it is refused too).
 */
export const orderWrites = (
  order: Order,
  placedAt: string,
  tables: { ordersTable: string, stockTable: string }
): TransactItem[] => [
  {
    Put: {
      TableName: tables.ordersTable,
      Item: { ...order, status: 'PLACED', placedAt },
      ConditionExpression: 'attribute_not_exists(orderId)'
    }
  },
  {
    Update: {
      TableName: tables.stockTable,
      Key: { sku: order.sku },
      UpdateExpression: 'SET available = available - :quantity ADD reserved :quantity',
      ConditionExpression: 'available >= :quantity',
      ExpressionAttributeValues: { ':quantity': order.quantity }
    }
  }
]

/** Which entry of `orderWrites` a refusal names, in words. */
export const refusedBecause = (error: IdempotencyTransactError): string =>
  error.code !== 'ConditionalCheckFailed'
    ? `${error.code}`
    : error.entry === 0 ? 'the order exists already' : error.entry === 1 ? 'not enough stock' : 'a condition failed'

export const createHandler = ({
  store, ordersTable, stockTable, logFailedRecord, logger, onOutcome, namespace, now = Date.now
}: OrderConsumerDependencies) =>
  middy<SQSEvent>({ timeoutEarlyInMillis: 1000 })
    // First, so that its `after` runs last and turns the per-record results into batchItemFailures.
    // Its default logger prints every failed record, body included: the middleware logs failures without it.
    .use(sqsPartialBatchFailure({ logger: logFailedRecord ?? (() => {}) }))
    .use(idempotency({
      store,
      // The shop may send an order twice (a retried checkout): the order id is what happens once.
      key: 'body.orderId',
      // A refused condition will be refused again: keep it FAILED, so that redeliveries do not
      // retry it and SQS moves the message to the dead-letter queue (a back-order process can
      // take it from there). Anything else (a TransactionConflict with another order for the
      // same sku, throttling) is released, and SQS's redelivery tries again.
      onFailure: (error) =>
        error instanceof IdempotencyTransactError && error.code === 'ConditionalCheckFailed' ? 'fail' : 'delete',
      expiresAfterSeconds: 24 * 3600,
      timeoutMarginMs: 1000,
      ...(namespace === undefined ? {} : { namespace }),
      ...(logger === undefined ? {} : { logger }),
      ...(onOutcome === undefined ? {} : { onOutcome })
    }))
    .handler(perRecord(async (record: SQSRecord, { transact }): Promise<PlacedOrder> => {
      const order = parseOrder(record)
      const placedAt = new Date(now()).toISOString()
      // Nothing is written here: the writes commit with the record's completion, after this returns.
      transact(...orderWrites(order, placedAt, { ordersTable, stockTable }))
      return { orderId: order.orderId, sku: order.sku, quantity: order.quantity, placedAt }
    }))

export const handler = createHandler({
  store: new DynamoDBStore({ tableName: process.env.IDEMPOTENCY_TABLE ?? 'IdempotencyStore', transactions }),
  ordersTable: process.env.ORDERS_TABLE ?? 'Orders',
  stockTable: process.env.STOCK_TABLE ?? 'Stock'
})
