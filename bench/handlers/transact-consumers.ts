/**
 * The consumers of the `transact` workloads (issue 7 item 4, issue 10 item 2). Each record's
 * effect is the same DynamoDB write: its order, put into an orders table.
 * - `ours transact`: `perRecord` + `transact`: one PutItem claim, then one TransactWriteItems
 *   holding the order and the record's fenced completion.
 * - `ours one-request`: the same handler under `effects: 'transact-only'` (issue 10 item 1): no
 *   claim; one TransactWriteItems holding the order and a put of the COMPLETED record,
 *   conditioned as the claim is.
 * - `seed pattern`: no library, what one writes by hand (seed 003): one TransactWriteItems of
 *   the order and an idempotency marker put with `attribute_not_exists`. A cancellation by
 *   the marker means "already done".
 * - `theirs`: Powertools, `makeIdempotent` around a function that puts the order with its own
 *   PutItem (Powertools has no way to join the effect to its record): claim, effect, completion.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb'
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch'
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency'
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, perRecord } from '../../src/index.js'
import { DynamoDBStore, transactions } from '../../src/dynamodb.js'
import { workCounter } from './work.js'

export type TransactContender = 'ours transact' | 'ours one-request' | 'seed pattern' | 'theirs'
export const TRANSACT_CONTENDERS: TransactContender[] = ['ours transact', 'ours one-request', 'seed pattern', 'theirs']

export type Invoke = (event: SQSEvent, context: Context) => Promise<unknown>

export interface TransactSetup {
  client: DynamoDBClient
  /** Ours: its idempotency table; seed pattern: the markers' table (same key schema); theirs: Powertools' table. */
  idempotencyTable: string
  ordersTable: string
}

/** The effect of a record: its order, as the item put into the orders table. */
const orderOf = (record: SQSRecord): Record<string, unknown> => {
  const body = JSON.parse(record.body) as Record<string, unknown>
  workCounter.runs++
  return { ...body, messageId: record.messageId, placedAt: Date.now() }
}

const EXPIRES_AFTER_SECONDS = 3600

const seedPattern = ({ client, idempotencyTable, ordersTable }: TransactSetup): Invoke => {
  const doc = DynamoDBDocumentClient.from(client)
  const one = async (record: SQSRecord): Promise<void> => {
    try {
      await doc.send(new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: ordersTable, Item: orderOf(record) } },
          {
            Put: {
              TableName: idempotencyTable,
              Item: { idempotencyKey: record.messageId, expiry: Math.floor(Date.now() / 1000) + EXPIRES_AFTER_SECONDS },
              ConditionExpression: 'attribute_not_exists(idempotencyKey)'
            }
          }
        ]
      }))
    } catch (error) {
      // Refused by the marker alone: the record was done before, which is a success.
      const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons
      if (reasons?.[1]?.Code === 'ConditionalCheckFailed' && reasons[0]?.Code === 'None') return
      throw error
    }
  }
  return async (event): Promise<SQSBatchResponse> => {
    const settled = await Promise.allSettled(event.Records.map(one))
    return { batchItemFailures: event.Records.filter((_, i) => settled[i]?.status === 'rejected').map((r) => ({ itemIdentifier: r.messageId })) }
  }
}

export const createTransactConsumer = (contender: TransactContender, setup: TransactSetup): Invoke => {
  const { client, idempotencyTable, ordersTable } = setup
  switch (contender) {
    case 'ours transact':
    case 'ours one-request':
      return middy<SQSEvent>()
        .use(sqsPartialBatchFailure({ logger: false as never }))
        .use(idempotency({
          store: new DynamoDBStore({ tableName: idempotencyTable, client, transactions }),
          ...(contender === 'ours one-request' ? { effects: 'transact-only' as const } : {})
        }))
        .handler(perRecord(async (record: SQSRecord, { transact }) => {
          const order = orderOf(record)
          transact({ Put: { TableName: ordersTable, Item: order } })
          return { placed: order.orderId }
        })) as unknown as Invoke
    case 'seed pattern':
      return seedPattern(setup)
    case 'theirs': {
      const doc = DynamoDBDocumentClient.from(client)
      const processor = new BatchProcessor(EventType.SQS)
      const config = new IdempotencyConfig({ eventKeyJmesPath: 'messageId' })
      const recordHandler = makeIdempotent(async (record: SQSRecord) => {
        const order = orderOf(record)
        await doc.send(new PutCommand({ TableName: ordersTable, Item: order }))
        return { placed: order.orderId }
      }, { persistenceStore: new DynamoDBPersistenceLayer({ tableName: idempotencyTable, awsSdkV3Client: client }), config })
      return async (event, context) => {
        config.registerLambdaContext(context)
        return await processPartialResponse(event, recordHandler, processor, { context })
      }
    }
  }
}
