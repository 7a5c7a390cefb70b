import {
  BatchGetItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand
} from '@aws-sdk/client-dynamodb'
import { IdempotencyConfigError, type IdempotencyStoreError, type StoredError, type StoreOperation } from '../../errors.js'
import type { ClaimRecord, CommitOutcome, CommitResult, IdempotencyRecord, IdempotencyStore, StoreCallOptions, StoreLimits } from '../store.js'
import { refuseUnknownOptions } from '../../unknown-options.js'
import { checkTransactItem, commitTransaction } from './transaction.js'
import { storeErrorOf } from './errors.js'
import { registerTable } from './access.js'
import { claimItem, keyItem, recordOf, type Item } from './items.js'
import { TableFit } from './table-check.js'
import { refuseSharedAttributes } from './attribute-names.js'
import type { AttributeNames, DynamoDBSender, DynamoDBStoreOptions, TransactItem } from './types.js'

export type { DynamoDBSender, DynamoDBStoreOptions }

const defaults: Omit<AttributeNames, 'sortKeyAttr'> & { sortKeyValue: string } = {
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

// A completion's update, with and without a result to store (an `undefined` result stores none).
const COMPLETE_WITHOUT_DATA = 'SET #status = :status, #expiry = :expiry REMOVE #data, #error'
const COMPLETE_WITH_DATA = 'SET #status = :status, #expiry = :expiry, #data = :data REMOVE #error'

const OPTION_NAMES = ['tableName', 'client', 'clientConfig', 'keyAttr', 'sortKeyAttr', 'sortKeyValue', 'statusAttr', 'expiryAttr', 'inProgressExpiryAttr',
  'leaseTokenAttr', 'payloadHashAttr', 'responseDataAttr', 'errorAttr'] as const satisfies ReadonlyArray<keyof DynamoDBStoreOptions>

/**
 * DynamoDB's own limits. An item holds 400 KB, names and values together; the rest of a record
 * (key, status, expiry, token, hash and their names) stays well under 2 KB. BatchGetItem reads
 * 100 keys; TransactWriteItems holds 100 entries (one is the completion) and 4 MB.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
 */
const LIMITS: StoreLimits = {
  maxResponseBytes: 400 * 1024 - 2 * 1024,
  maxReadKeys: 100,
  transaction: { maxWrites: 99, maxBytes: 4 * 1024 * 1024 }
}

/**
 * The DynamoDB store: one conditional `PutItem` per claim (a refused claim returns the
 * standing record with `ReturnValuesOnConditionCheckFailure: ALL_OLD`, so a duplicate
 * costs one request), completion, failure and release fenced by the claim's lease token.
 *
 * Table: partition key `idempotencyKey` (S), TTL on `expiry`. See the README for the
 * table and the least-privilege IAM policy (PutItem, UpdateItem, DeleteItem,
 * BatchGetItem on the table; DescribeTimeToLive and DescribeTable optional). A table that
 * does not fit the settings is refused before the first claim (docs/stores.md).
 *
 * @example
 * ```ts
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
 * import { DynamoDBStore } from 'middy-idempotency'
 *
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', client: new DynamoDBClient({}) })
 * ```
 */
export class DynamoDBStore implements IdempotencyStore<TransactItem> {
  /** Names the store in errors, whatever a minifier makes of the class's name. */
  readonly name = 'DynamoDBStore'
  readonly tableName: string
  readonly limits = LIMITS
  readonly #client: DynamoDBSender
  readonly #names: AttributeNames
  readonly #sortKeyValue: string
  /** Whether the table fits the settings: checked once, before the first claim, read or commit. */
  readonly #fit: TableFit

  constructor (options: DynamoDBStoreOptions) {
    // A misspelt option first: `tablename` is a slip to name, not a missing tableName.
    if (options !== null && typeof options === 'object') refuseUnknownOptions('DynamoDBStore', options, OPTION_NAMES)
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
    this.#names = { ...defaults, ...stripUndefined(names) }
    refuseSharedAttributes(this.#names)
    this.tableName = tableName
    this.#client = client ?? new DynamoDBClient(clientConfig ?? {})
    this.#sortKeyValue = sortKeyValue ?? defaults.sortKeyValue
    registerTable(this, { client: this.#client, tableName, names: this.#names, sortKeyValue: this.#sortKeyValue })
    this.#fit = new TableFit(this.#client, tableName, this.#names, (key) => this.#keyOf(key))
  }

  async claim (record: ClaimRecord, nowMs: number, options?: StoreCallOptions): Promise<IdempotencyRecord | undefined> {
    const n = this.#names
    try {
      await this.#fit.ready()
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
      }), abortable(options))
      return undefined
    } catch (error) {
      if (isConditionFailure(error)) {
        const old = (error as { Item?: Item }).Item
        // An empty ALL_OLD cannot happen for a refused claim; treat it as a store fault, never as "claimed".
        if (old !== undefined) return this.#fromItem(old)
      }
      throw await this.#storeError('claim', record.key, error)
    }
  }

  async complete (key: string, leaseToken: string, outcome: { expiry: number, responseData?: string }, options?: StoreCallOptions): Promise<boolean> {
    const n = this.#names
    const values: Item = { ':status': { S: 'COMPLETED' }, ':expiry': { N: String(outcome.expiry) }, ':token': { S: leaseToken } }
    if (outcome.responseData !== undefined) values[':data'] = { S: outcome.responseData }
    return this.#fenced('complete', key, outcome.responseData === undefined ? COMPLETE_WITHOUT_DATA : COMPLETE_WITH_DATA,
      { '#data': n.responseDataAttr, '#error': n.errorAttr, '#token': n.leaseTokenAttr, '#status': n.statusAttr, '#expiry': n.expiryAttr }, values, options)
  }

  async fail (key: string, leaseToken: string, outcome: { expiry: number, error: StoredError }, options?: StoreCallOptions): Promise<boolean> {
    const n = this.#names
    const values: Item = {
      ':status': { S: 'FAILED' },
      ':expiry': { N: String(outcome.expiry) },
      ':error': { M: { name: { S: outcome.error.name }, message: { S: outcome.error.message }, ...(outcome.error.code === undefined ? {} : { code: { S: outcome.error.code } }) } },
      ':token': { S: leaseToken }
    }
    return this.#fenced('fail', key, 'SET #status = :status, #expiry = :expiry, #error = :error REMOVE #data',
      { '#error': n.errorAttr, '#data': n.responseDataAttr, '#token': n.leaseTokenAttr, '#status': n.statusAttr, '#expiry': n.expiryAttr }, values, options)
  }

  async release (key: string, leaseToken: string, options?: StoreCallOptions): Promise<boolean> {
    return this.#fenced('release', key, undefined, { '#token': this.#names.leaseTokenAttr }, { ':token': { S: leaseToken } }, options)
  }

  async read (keys: readonly string[], options?: StoreCallOptions): Promise<Map<string, IdempotencyRecord>> {
    const found = new Map<string, IdempotencyRecord>()
    // BatchGetItem refuses a request that names a key twice.
    const unique = [...new Set(keys)]
    const chunks: string[][] = []
    for (let i = 0; i < unique.length; i += LIMITS.maxReadKeys) chunks.push(unique.slice(i, i + LIMITS.maxReadKeys))
    await Promise.all(chunks.map(async (chunk) => {
      try {
        await this.#fit.ready()
        const output = await this.#client.send(new BatchGetItemCommand({
          // A claim decision needs the latest write, so reads are strongly consistent.
          RequestItems: { [this.tableName]: { Keys: chunk.map((key) => this.#keyOf(key)), ConsistentRead: true } }
        }), abortable(options))
        // Keys left in UnprocessedKeys are simply not returned: the caller claims them instead.
        for (const item of output.Responses?.[this.tableName] ?? []) {
          const record = this.#fromItem(item)
          found.set(record.key, record)
        }
      } catch (error) {
        throw await this.#storeError('read', undefined, error)
      }
    }))
    return found
  }

  async commit (key: string, leaseToken: string, outcome: CommitOutcome, writes: readonly TransactItem[], claim?: { nowMs: number }, options?: StoreCallOptions): Promise<CommitResult> {
    try {
      await this.#fit.ready()
      return await commitTransaction({ client: this.#client, tableName: this.tableName, key: this.#keyOf(key), names: this.#names, fromItem: (item) => this.#fromItem(item), ...abortable(options) }, leaseToken, outcome, writes, claim)
    } catch (error) {
      throw await this.#storeError('commit', key, error)
    }
  }

  checkWrite (write: unknown): string | undefined {
    return checkTransactItem(write)
  }

  /** `names` and `values` hold the token's (`#token`, `:token`), and with an update its `#status` and `#expiry`. */
  async #fenced (operation: 'complete' | 'fail' | 'release', key: string,
    update: string | undefined, names: Record<string, string>, values: Item, options: StoreCallOptions | undefined): Promise<boolean> {
    const common = {
      TableName: this.tableName,
      Key: this.#keyOf(key),
      ConditionExpression: '#token = :token',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values
    }
    try {
      await this.#client.send(update === undefined
        ? new DeleteItemCommand(common)
        : new UpdateItemCommand({ ...common, UpdateExpression: update }), abortable(options))
      return true
    } catch (error) {
      if (isConditionFailure(error)) return false
      throw await this.#storeError(operation, key, error)
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

  async #storeError (operation: StoreOperation, key: string | undefined, error: unknown): Promise<IdempotencyStoreError> {
    return storeErrorOf(this.tableName, this.#names, operation, key, error, await this.#fit.explain(error))
  }
}

/**
 * The SDK's options for a call the lifecycle may give up: an aborted request is closed, so a
 * blackholed endpoint does not keep a socket of the client's pool for the rest of the process.
 */
const abortable = (options: StoreCallOptions | undefined): { abortSignal?: AbortSignal } =>
  options?.signal === undefined ? {} : { abortSignal: options.signal }

const isConditionFailure = (error: unknown): boolean =>
  (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException'

const stripUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
