import { CreateTableCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda'
import { IdempotencyFailedError, IdempotencyTransactError } from '../../src/index.js'
import { DynamoDBStore, transactions } from '../../src/dynamodb.js'
import { createHandler, refusedBecause, type Order } from '../sam-app/src/order-consumer.js'
import { heading, shorten, table } from './print.js'
import { batch, lambdaContext, redelivery } from './sqs-messages.js'
import type { StoryResult } from './story.js'
import { scanItems } from './table-items.js'

const ORDERS = 'Orders'
const STOCK = 'Stock'
let sent = 0

const orderMessage = (order: Order): SQSRecord => {
  const messageId = `ord-msg-${String(++sent).padStart(2, '0')}`
  const now = String(Date.now())
  return {
    messageId,
    receiptHandle: `${messageId}-receipt-1`,
    body: JSON.stringify(order),
    attributes: {
      ApproximateReceiveCount: '1', SentTimestamp: now, SenderId: 'AIDASHOP', ApproximateFirstReceiveTimestamp: now
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:orders',
    awsRegion: 'eu-west-1'
  }
}

const createTable = async (client: DynamoDBClient, name: string, key: string): Promise<void> => {
  await client.send(new CreateTableCommand({
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: key, KeyType: 'HASH' }],
    AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }]
  }))
}

/**
 * The order consumer of `order-consumer.ts`: two orders for the last lamp, one placed and
 * one refused by its stock condition with nothing written; a redelivery replays without
 * writing. Every fact is read outside the middleware: the TransactWriteItems requests the
 * client sent, the batch answer, the failure reasons, the Orders and Stock tables.
 */
export const orderStory = async (newClient: () => DynamoDBClient, idempotencyTable: string): Promise<StoryResult> => {
  heading(
    '10. Orders placed with transact (examples/sam-app/src/order-consumer.ts): ' +
    'two customers order the last oak lamp',
    'The order Put (attribute_not_exists) and the stock Update (available >= :quantity) ' +
    'commit in one TransactWriteItems with the record\'s completion.'
  )
  const problems: string[] = []
  const client = newClient()
  const transactWritesSent: string[] = []
  client.middlewareStack.add((next, context) => async (args) => {
    const name = String((context as { commandName?: string }).commandName)
    if (name.startsWith('TransactWrite')) transactWritesSent.push(name)
    return await next(args)
  }, { step: 'initialize', name: 'countTransactions' })
  try {
    await createTable(client, ORDERS, 'orderId')
    await createTable(client, STOCK, 'sku')
    for (const [sku, available] of [['lamp-oak', 1], ['mug-blue', 20]] as const) {
      await client.send(new PutItemCommand({
        TableName: STOCK,
        Item: { sku: { S: sku }, available: { N: String(available) }, reserved: { N: '0' } }
      }))
    }
    // Why a record was reported failed: onOutcome tells each record's error, also when no record
    // of the batch could run (and the batch middleware's logger was skipped).
    const reasons = new Map<string, unknown>()
    const handler = createHandler({
      store: new DynamoDBStore({ tableName: idempotencyTable, client, transactions }),
      ordersTable: ORDERS,
      stockTable: STOCK,
      namespace: 'orders-consumer',
      logger: false,
      logFailedRecord: () => {},
      onOutcome: ({ id, error }) => { if (id !== undefined && error !== undefined) reasons.set(id, error) }
    })
    const deliver = async (records: SQSRecord[]): Promise<Map<string, string>> => {
      const before = transactWritesSent.length
      reasons.clear()
      const answer = await handler(batch(records), lambdaContext()) as SQSBatchResponse
      const failed = new Set(answer.batchItemFailures.map((f) => f.itemIdentifier))
      const outcomes = new Map<string, string>()
      table(['message', 'order', 'customer', 'sku', 'outcome', 'SQS'], records.map((record) => {
        const order = JSON.parse(record.body) as Order
        const reason = reasons.get(record.messageId)
        const outcome = !failed.has(record.messageId)
          ? (Number(record.attributes.ApproximateReceiveCount) > 1 ? 'replayed' : 'placed')
          : reason instanceof IdempotencyTransactError
            ? `refused: ${refusedBecause(reason)} (entry ${reason.entry}, ${reason.code})`
            : reason instanceof IdempotencyFailedError ? `refused before, not run (${reason.storedError.name})`
              : `failed: ${reason instanceof Error ? reason.message : String(reason)}`
        outcomes.set(order.orderId, outcome)
        return [
          record.messageId,
          order.orderId,
          order.customerId,
          `${order.sku} x${order.quantity}`,
          outcome,
          failed.has(record.messageId) ? 'retry' : 'done'
        ]
      }))
      console.log(`  TransactWriteItems sent: ${transactWritesSent.length - before}`)
      return outcomes
    }
    const showTables = async (): Promise<{ orders: string[], stock: Map<string, string> }> => {
      const orders = (await scanItems(client, ORDERS))
        .sort((a, b) => String(a.orderId).localeCompare(String(b.orderId)))
      const stock = (await scanItems(client, STOCK)).sort((a, b) => String(a.sku).localeCompare(String(b.sku)))
      table(['Orders: orderId', 'customer', 'sku', 'qty', 'status'], orders.map((o) => [
        String(o.orderId), String(o.customerId), String(o.sku), String(o.quantity), String(o.status)
      ]))
      table(['Stock: sku', 'available', 'reserved'],
        stock.map((s) => [String(s.sku), String(s.available), String(s.reserved)]))
      return {
        orders: orders.map((o) => String(o.orderId)),
        stock: new Map(stock.map((s) => [String(s.sku), `${s.available}/${s.reserved}`]))
      }
    }

    const first = orderMessage({ orderId: 'order-501', customerId: 'cust-17', sku: 'lamp-oak', quantity: 1 })
    const later = [
      orderMessage({ orderId: 'order-502', customerId: 'cust-42', sku: 'lamp-oak', quantity: 1 }),
      orderMessage({ orderId: 'order-503', customerId: 'cust-42', sku: 'mug-blue', quantity: 2 })
    ]
    await deliver([first])
    console.log('  A moment later, the second lamp order arrives in a batch with a mug order:')
    const refused = await deliver(later)
    const refusal = reasons.get(later[0]?.messageId ?? '')
    if (refusal instanceof IdempotencyTransactError) {
      console.log(`  reason: ${refusal.name}: ${shorten(refusal.message, 150)}`)
    }
    const refusedByStock = refusal instanceof IdempotencyTransactError && refusal.entry === 1 &&
      refusal.code === 'ConditionalCheckFailed'
    if (!refusedByStock) {
      problems.push(`transact: order-502 was not refused by its stock condition (${String(refusal)})`)
    }
    if (refused.get('order-503') !== 'placed') {
      problems.push(`transact: order-503 was ${refused.get('order-503')}, not placed`)
    }
    const placed = await showTables()
    if (placed.orders.join() !== 'order-501,order-503') {
      problems.push(`transact: the Orders table holds ${placed.orders.join(', ')}`)
    }
    if (placed.stock.get('lamp-oak') !== '0/1' || placed.stock.get('mug-blue') !== '18/2') {
      problems.push(`transact: stock is ${[...placed.stock].join(' ')}`)
    }

    heading('10b. The acknowledgement was lost: SQS delivers the three orders again',
      'Placed orders replay their stored answer without writing; the refused one is kept FAILED and not run again.')
    const before = transactWritesSent.length
    const replays = await deliver([first, ...later].map(redelivery))
    const after = await showTables()
    if (transactWritesSent.length !== before) {
      problems.push(`transact: the redelivery sent ${transactWritesSent.length - before} TransactWriteItems`)
    }
    if (replays.get('order-501') !== 'replayed' || replays.get('order-503') !== 'replayed') {
      problems.push('transact: a placed order did not replay')
    }
    if (replays.get('order-502')?.startsWith('refused before') !== true) {
      problems.push(`transact: order-502's redelivery was ${replays.get('order-502')}`)
    }
    if ([...after.stock].join() !== [...placed.stock].join() || after.orders.join() !== placed.orders.join()) {
      problems.push('transact: the redelivery changed Orders or Stock')
    }
    return {
      problems,
      summary: `Orders: 3 orders in 6 deliveries; ${transactWritesSent.length} TransactWriteItems, ` +
        `${after.orders.length} orders placed, 1 refused by its stock condition with nothing written; ` +
        `lamp-oak reserved ${after.stock.get('lamp-oak')?.split('/')[1]} of 1.`
    }
  } finally {
    client.destroy()
  }
}
