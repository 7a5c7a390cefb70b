import {
  BatchGetItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClientConfig
} from '@aws-sdk/client-dynamodb'
import { IdempotencyConfigError, type IdempotencyStoreError, type StoredError, type StoreOperation } from '../errors.js'
import { commitTransaction } from './dynamodb-commit.js'
import { storeErrorOf } from './dynamodb-errors.js'
import { claimItem, keyItem, recordOf, type Item } from './dynamodb-items.js'
import type { ClaimRecord, CommitOutcome, CommitResult, IdempotencyRecord, IdempotencyStore, TransactItem } from './store.js'

/**
 * Anything with the SDK v3 `send`: a `DynamoDBClient` or a `DynamoDBDocumentClient`.
 *
 * @example
 * ```ts
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', client: DynamoDBDocumentClient.from(new DynamoDBClient({})) })
 * ```
 */
export interface DynamoDBSender {
  send: DynamoDBClient['send']
}

/**
 * Options of {@link DynamoDBStore}. Every attribute name can be changed, so the store
 * fits an existing table.
 *
 * @example
 * ```ts
 * const options: DynamoDBStoreOptions = { tableName: 'App', keyAttr: 'pk', sortKeyAttr: 'sk', sortKeyValue: 'idempotency' }
 * ```
 */
export interface DynamoDBStoreOptions {
  /** Name of the table. Required. */
  tableName: string
  /**
   * A `DynamoDBClient` or a `DynamoDBDocumentClient` (its low-level client is used; the
   * store marshals its own items). [a new `DynamoDBClient` from `clientConfig`]
   */
  client?: DynamoDBSender
  /** Config for the client the store makes when `client` is not given. [`{}`] */
  clientConfig?: DynamoDBClientConfig
  /** Partition key attribute (type S). [`'idempotencyKey'`] */
  keyAttr?: string
  /** Sort key attribute (type S), for a table shared with other items. [none] */
  sortKeyAttr?: string
  /** Value written to `sortKeyAttr` on every idempotency record. [`'idempotency'`] */
  sortKeyValue?: string
  /** [`'status'`] */
  statusAttr?: string
  /** TTL attribute, epoch seconds: enable TTL on it. [`'expiry'`] */
  expiryAttr?: string
  /** End of the IN_PROGRESS lease, epoch milliseconds. [`'inProgressExpiry'`] */
  inProgressExpiryAttr?: string
  /** Fencing token of the current claim. [`'leaseToken'`] */
  leaseTokenAttr?: string
  /** [`'payloadHash'`] */
  payloadHashAttr?: string
  /** COMPLETED result as JSON (type S). [`'responseData'`] */
  responseDataAttr?: string
  /** FAILED error, a map of name and message. [`'error'`] */
  errorAttr?: string
}

const defaults = {
  keyAttr: 'idempotencyKey',
  sortKeyValue: 'idempotency',
  statusAttr: 'status',
  expiryAttr: 'expiry',
  inProgressExpiryAttr: 'inProgressExpiry',
  leaseTokenAttr: 'leaseToken',
  payloadHashAttr: 'payloadHash',
  responseDataAttr: 'responseData',
  errorAttr: 'error'
}

export type AttributeNames = typeof defaults & { sortKeyAttr?: string }


// BatchGetItem takes at most 100 keys per request:
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
const BATCH_GET_LIMIT = 100

/**
 * The DynamoDB store: one conditional `PutItem` per claim (a refused claim returns the
 * standing record with `ReturnValuesOnConditionCheckFailure: ALL_OLD`, so a duplicate
 * costs one request), completion, failure and release fenced by the claim's lease token.
 *
 * Table: partition key `idempotencyKey` (S), TTL on `expiry`. See the README for the
 * CloudFormation and the least-privilege IAM policy (PutItem, UpdateItem, DeleteItem,
 * BatchGetItem on the table).
 *
 * @example
 * ```ts
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
 * import { DynamoDBStore } from 'middy-idempotency'
 *
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', client: new DynamoDBClient({}) })
 * ```
 */
export class DynamoDBStore implements IdempotencyStore {
  readonly tableName: string
  readonly #client: DynamoDBSender
  readonly #names: AttributeNames
  readonly #sortKeyValue: string

  constructor (options: DynamoDBStoreOptions) {
    if (typeof options?.tableName !== 'string' || options.tableName === '') {
      throw new IdempotencyConfigError('DynamoDBStore: tableName must be a non-empty string')
    }
    if (options.client !== undefined && typeof options.client?.send !== 'function') {
      throw new IdempotencyConfigError('DynamoDBStore: client must be a DynamoDBClient or a DynamoDBDocumentClient')
    }
    const { tableName, client, clientConfig, sortKeyValue, ...names } = options
    for (const [option, value] of Object.entries(names)) {
      if (value !== undefined && (typeof value !== 'string' || value === '')) {
        throw new IdempotencyConfigError(`DynamoDBStore: ${option} must be a non-empty string`)
      }
    }
    this.tableName = tableName
    this.#client = client ?? new DynamoDBClient(clientConfig ?? {})
    this.#names = { ...defaults, ...stripUndefined(names) }
    this.#sortKeyValue = sortKeyValue ?? defaults.sortKeyValue
  }

  async claim (record: ClaimRecord, nowMs: number): Promise<IdempotencyRecord | undefined> {
    const n = this.#names
    try {
      await this.#client.send(new PutItemCommand({
        TableName: this.tableName,
        Item: this.#toItem(record),
        ConditionExpression: 'attribute_not_exists(#key) OR #expiry < :nowSeconds OR (#status = :inProgress AND #lease < :nowMs)',
        ExpressionAttributeNames: { '#key': n.keyAttr, '#expiry': n.expiryAttr, '#status': n.statusAttr, '#lease': n.inProgressExpiryAttr },
        ExpressionAttributeValues: {
          ':nowSeconds': { N: String(Math.floor(nowMs / 1000)) },
          ':nowMs': { N: String(nowMs) },
          ':inProgress': { S: 'IN_PROGRESS' }
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD'
      }))
      return undefined
    } catch (error) {
      if (isConditionFailure(error)) {
        const old = (error as { Item?: Item }).Item
        // An empty ALL_OLD cannot happen for a refused claim; treat it as a store fault, never as "claimed".
        if (old !== undefined) return this.#fromItem(old)
      }
      throw this.#storeError('claim', record.key, error)
    }
  }

  async complete (key: string, leaseToken: string, outcome: { expiry: number, responseData?: string }): Promise<boolean> {
    const n = this.#names
    const values: Item = { ':status': { S: 'COMPLETED' }, ':expiry': { N: String(outcome.expiry) } }
    let update = 'SET #status = :status, #expiry = :expiry'
    if (outcome.responseData === undefined) update += ' REMOVE #data, #error'
    else {
      update += ', #data = :data REMOVE #error'
      values[':data'] = { S: outcome.responseData }
    }
    return this.#fenced('complete', key, leaseToken, update, { '#data': n.responseDataAttr, '#error': n.errorAttr }, values)
  }

  async fail (key: string, leaseToken: string, outcome: { expiry: number, error: StoredError }): Promise<boolean> {
    const values: Item = {
      ':status': { S: 'FAILED' },
      ':expiry': { N: String(outcome.expiry) },
      ':error': { M: { name: { S: outcome.error.name }, message: { S: outcome.error.message }, ...(outcome.error.code === undefined ? {} : { code: { S: outcome.error.code } }) } }
    }
    return this.#fenced('fail', key, leaseToken, 'SET #status = :status, #expiry = :expiry, #error = :error REMOVE #data',
      { '#error': this.#names.errorAttr, '#data': this.#names.responseDataAttr }, values)
  }

  async release (key: string, leaseToken: string): Promise<boolean> {
    return this.#fenced('release', key, leaseToken, undefined, {}, {})
  }

  async read (keys: readonly string[]): Promise<Map<string, IdempotencyRecord>> {
    const found = new Map<string, IdempotencyRecord>()
    // BatchGetItem refuses a request that names a key twice.
    const unique = [...new Set(keys)]
    const chunks: string[][] = []
    for (let i = 0; i < unique.length; i += BATCH_GET_LIMIT) chunks.push(unique.slice(i, i + BATCH_GET_LIMIT))
    await Promise.all(chunks.map(async (chunk) => {
      try {
        const output = await this.#client.send(new BatchGetItemCommand({
          // A claim decision needs the latest write, so reads are strongly consistent.
          RequestItems: { [this.tableName]: { Keys: chunk.map((key) => this.#keyOf(key)), ConsistentRead: true } }
        }))
        // Keys left in UnprocessedKeys are simply not returned: the caller claims them instead.
        for (const item of output.Responses?.[this.tableName] ?? []) {
          const record = this.#fromItem(item)
          found.set(record.key, record)
        }
      } catch (error) {
        throw this.#storeError('read', undefined, error)
      }
    }))
    return found
  }

  async commit (key: string, leaseToken: string, outcome: CommitOutcome, writes: readonly TransactItem[], claim?: { nowMs: number }): Promise<CommitResult> {
    try {
      return await commitTransaction({ client: this.#client, tableName: this.tableName, key: this.#keyOf(key), names: this.#names, fromItem: (item) => this.#fromItem(item) }, leaseToken, outcome, writes, claim)
    } catch (error) {
      throw this.#storeError('commit', key, error)
    }
  }

  async #fenced (operation: 'complete' | 'fail' | 'release', key: string, leaseToken: string,
    update: string | undefined, names: Record<string, string>, values: Item): Promise<boolean> {
    const n = this.#names
    const common = {
      TableName: this.tableName,
      Key: this.#keyOf(key),
      ConditionExpression: '#token = :token',
      ExpressionAttributeNames: { ...names, '#token': n.leaseTokenAttr } as Record<string, string>,
      ExpressionAttributeValues: { ...values, ':token': { S: leaseToken } }
    }
    if (update !== undefined) {
      common.ExpressionAttributeNames['#status'] = n.statusAttr
      common.ExpressionAttributeNames['#expiry'] = n.expiryAttr
    }
    try {
      await this.#client.send(update === undefined
        ? new DeleteItemCommand(common)
        : new UpdateItemCommand({ ...common, UpdateExpression: update }))
      return true
    } catch (error) {
      if (isConditionFailure(error)) return false
      throw this.#storeError(operation, key, error)
    }
  }

  #keyOf (key: string): Item {
    return keyItem(this.#names, this.#sortKeyValue, key)
  }

  #toItem (record: ClaimRecord): Item {
    return claimItem(this.#names, this.#sortKeyValue, record)
  }

  #fromItem (item: Item): IdempotencyRecord {
    return recordOf(this.#names, item)
  }

  #storeError (operation: StoreOperation, key: string | undefined, error: unknown): IdempotencyStoreError {
    return storeErrorOf(this.tableName, this.#names, operation, key, error)
  }

}

const isConditionFailure = (error: unknown): boolean =>
  (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException'

const stripUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
