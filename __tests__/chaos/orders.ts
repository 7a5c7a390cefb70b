import { CreateTableCommand, DeleteTableCommand, GetItemCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { unmarshall } from '@aws-sdk/util-dynamodb'
import type { TransactItem } from '../../src/store.js'
import type { Effect } from './ledger.js'

/** Payments are spread over this many accounts: few enough that balances add up many payments. */
const ACCOUNTS = 17
const accountOf = (paymentId: string): string => `account-${Number(paymentId.replace(/\D/g, '')) % ACCOUNTS}`

export interface OrdersAudit {
  /** One per payment item found: its Put is the payment's effect. */
  effects: Effect[]
  /** Payments counted by the accounts' `payments` counters, and by the payment items: equal when every transaction was whole. */
  accountPayments: number
  accountBalance: number
  /** Sum of the amounts of the payment items. */
  paymentAmounts: number
}

/**
 * The transact profile's payment table, on the same DynamoDB Local as the idempotency table:
 * a payment is one `Put` of the payment (guarded by `attribute_not_exists`, as users write it)
 * and one `ADD` to its account's balance, queued with `transact` so that both commit in one
 * transaction with the record's completion. The table is the truth the audit reads back.
 */
export class OrdersTable {
  readonly tableName = `chaos-orders-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  readonly #client: DynamoDBClient

  /** `client` must be one without injected faults: the audit's reads are not part of the chaos. */
  constructor (client: DynamoDBClient) {
    this.#client = client
  }

  async create (): Promise<void> {
    await this.#client.send(new CreateTableCommand({
      TableName: this.tableName,
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST'
    }))
  }

  async drop (): Promise<void> {
    await this.#client.send(new DeleteTableCommand({ TableName: this.tableName }))
  }

  /** The writes of one payment, in lib-dynamodb's native-value entry shape. */
  writes (effect: Effect, amount: number): TransactItem[] {
    return [
      { Put: { TableName: this.tableName, Item: { id: effect.paymentId, kind: 'payment', amount, ...effect }, ConditionExpression: 'attribute_not_exists(id)' } },
      {
        Update: {
          TableName: this.tableName,
          Key: { id: accountOf(effect.paymentId) },
          UpdateExpression: 'ADD balance :amount, payments :one',
          ExpressionAttributeValues: { ':amount': amount, ':one': 1 }
        }
      }
    ]
  }

  /** Whether the payment's commit landed (a consistent read: the commits before it are visible). */
  async applied (paymentId: string): Promise<boolean> {
    const out = await this.#client.send(new GetItemCommand({ TableName: this.tableName, Key: { id: { S: paymentId } }, ConsistentRead: true }))
    return out.Item !== undefined
  }

  /** Every payment item and every account, read back once the run is over. */
  async audit (): Promise<OrdersAudit> {
    const items: Array<Record<string, any>> = []
    for (let start: Record<string, any> | undefined, first = true; first || start !== undefined; first = false) {
      const page = await this.#client.send(new ScanCommand({ TableName: this.tableName, ConsistentRead: true, ...(start === undefined ? {} : { ExclusiveStartKey: start }) }))
      items.push(...(page.Items ?? []).map((item) => unmarshall(item)))
      start = page.LastEvaluatedKey
    }
    const payments = items.filter((i) => i.kind === 'payment')
    const accounts = items.filter((i) => i.kind !== 'payment')
    const effects = payments.map((p): Effect => ({
      paymentId: String(p.paymentId),
      messageId: String(p.messageId),
      ...(p.groupId === undefined ? {} : { groupId: String(p.groupId) }),
      sequence: Number(p.sequence),
      invocationId: String(p.invocationId),
      consumerId: String(p.consumerId),
      at: Number(p.at)
    })).sort((a, b) => a.at - b.at || a.paymentId.localeCompare(b.paymentId))
    return {
      effects,
      accountPayments: accounts.reduce((n, a) => n + Number(a.payments ?? 0), 0),
      accountBalance: accounts.reduce((n, a) => n + Number(a.balance ?? 0), 0),
      paymentAmounts: payments.reduce((n, p) => n + Number(p.amount), 0)
    }
  }
}
