import {
  IdempotencyConfigError, type IdempotencyStoreError, type StoredError, type StoreOperation
} from '../../errors.js'
import type {
  ClaimRecord, CommitOutcome, CommitResult, IdempotencyRecord, IdempotencyStore, StoreCallOptions, StoreLimits
} from '../store.js'
import { ATTRIBUTES, GROUPED_CONCURRENCY, LIMITS, OPTION_NAMES } from './store-options.js'
import { definedOptions, refuseUnknownOptions } from '../../unknown-options.js'
import { isConditionFailure, storeErrorOf } from './errors.js'
import { registerTable } from './access.js'
import { claimItem, keyItem, recordOf, type Item } from './items.js'
import { tableFit, type TableFit } from './table-check.js'
import { refuseSharedAttributes } from './attribute-names.js'
import { claimCondition } from './claim-condition.js'
import { completionUpdate, failureUpdate, leaseFence } from './completion.js'
import {
  groupedClaim, groupedFenced, groupedWritesOn, type Grouped, type GroupedWrites
} from './grouped.js'
import { Statements, type Statement } from './statements.js'
import type {
  AttributeNames, CommitTarget, DynamoDBAwsLiteClient, DynamoDBSender, DynamoDBStoreOptions, DynamoDBTransactions,
  TransactItem
} from './types.js'
import { abortable, loadSdk, wireOf, type DynamoDBWire } from './wire.js'

export type { DynamoDBAwsLiteClient, DynamoDBSender, DynamoDBStoreOptions }

/**
 * The DynamoDB store. A claim is a conditional write that returns the record in its way
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), so a duplicate costs no extra read. Completion,
 * failure and release are fenced by the claim's lease token. Writes made together are grouped into
 * PartiQL `BatchExecuteStatement` requests of up to 25 (`groupWrites`); a write alone is one
 * single-item request.
 *
 * Table: partition key `idempotencyKey` (S), TTL on `expiry`; docs/dynamodb-table.md has the
 * table and the least-privilege IAM policy. A table that does not fit the settings is refused
 * before the first claim (docs/stores.md).
 *
 * @example
 * ```ts
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
 * import { DynamoDBStore, transactions } from 'middy-idempotency/dynamodb'
 *
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', client: new DynamoDBClient({}) })
 * // A store for `transact` and `effects: 'transact-only'`:
 * const transacting = new DynamoDBStore({ tableName: 'IdempotencyStore', transactions })
 * ```
 */
export class DynamoDBStore implements IdempotencyStore<TransactItem> {
  /** Names the store in errors, whatever a minifier makes of the class's name. */
  readonly name = 'DynamoDBStore'
  readonly tableName: string
  readonly limits: StoreLimits
  readonly #client: DynamoDBWire
  /** The PartiQL statements of grouped writes, and the writer that groups them; absent with `groupWrites: false`. */
  readonly #statements: Statements
  readonly #grouped: GroupedWrites | undefined
  readonly #names: AttributeNames
  readonly #sortKeyValue: string
  /** Whether the table fits the settings: checked once, before the first claim, read or commit. */
  readonly #fit: TableFit
  /**
   * With `transactions`: one `TransactWriteItems` of the writes and the completion (see
   * `IdempotencyStore.commit`). Absent without it: `transact` is then refused.
   */
  declare readonly commit?: (key: string, leaseToken: string, outcome: CommitOutcome, writes: readonly TransactItem[],
    claim?: { nowMs: number }, options?: StoreCallOptions) => Promise<CommitResult>

  /** With `transactions`: why `write` is not a `TransactWriteItems` entry, or undefined. */
  declare readonly checkWrite?: (write: unknown) => string | undefined

  constructor (options: DynamoDBStoreOptions) {
    // A misspelt option first: `tablename` is a slip to name, not a missing tableName.
    if (options !== null && typeof options === 'object') refuseUnknownOptions('DynamoDBStore', options, OPTION_NAMES)
    if (typeof options?.tableName !== 'string' || options.tableName === '') {
      throw new IdempotencyConfigError('DynamoDBStore: tableName must be a non-empty string')
    }
    if (options.groupWrites !== undefined && typeof options.groupWrites !== 'boolean') {
      throw new IdempotencyConfigError('DynamoDBStore: groupWrites must be true or false')
    }
    const { tableName, client, clientConfig, sortKeyValue, transactions, groupWrites = true, ...names } = options
    this.#names = { ...ATTRIBUTES, ...definedOptions(names) }
    refuseSharedAttributes(this.#names)
    this.tableName = tableName
    // The SDK is imported only to make the default client: an @aws-lite/client never loads it.
    this.#client = wireOf(client, async () => new (await loadSdk()).DynamoDBClient(clientConfig ?? {}))
    this.#sortKeyValue = sortKeyValue ?? 'idempotency'
    registerTable(this, { client: this.#client, tableName, names: this.#names, sortKeyValue: this.#sortKeyValue })
    this.#fit = tableFit(this.#client, tableName, this.#names, (key) => this.#keyOf(key))
    this.#statements = new Statements(tableName, this.#names, this.#sortKeyValue)
    this.#grouped = groupWrites ? groupedWritesOn(this.#client, this.tableName) : undefined
    this.limits = groupWrites ? { ...LIMITS, maxStoreRequests: GROUPED_CONCURRENCY } : LIMITS
    if (transactions !== undefined) {
      if (typeof transactions?.commit !== 'function' || typeof transactions.checkWrite !== 'function') {
        throw new IdempotencyConfigError(
          "DynamoDBStore: transactions must be the transactions exported by 'middy-idempotency/dynamodb'")
      }
      // Installed only when given, so that the transaction writer is bundled by its users alone.
      this.commit = this.#committing(transactions)
      this.checkWrite = transactions.checkWrite
    }
  }

  #committing (transactions: DynamoDBTransactions): NonNullable<DynamoDBStore['commit']> {
    return async (key, leaseToken, outcome, writes, claim, options) => {
      try {
        await this.#fit.ready()
        const target: CommitTarget = {
          client: this.#client,
          tableName: this.tableName,
          key: this.#keyOf(key),
          names: this.#names,
          fromItem: (item) => this.#fromItem(item),
          ...abortable(options)
        }
        return await transactions.commit(target, leaseToken, outcome, writes, claim)
      } catch (error) {
        throw await this.#storeError('commit', key, error)
      }
    }
  }

  async claim (record: ClaimRecord, nowMs: number, options?: StoreCallOptions): Promise<IdempotencyRecord | undefined> {
    try {
      await this.#fit.ready()
      return await this.#write(record.key,
        () => groupedClaim(this.#statements, (item) => this.#fromItem(item), record, nowMs),
        async () => await this.#claimAlone(record, nowMs, options), options)
    } catch (error) {
      throw await this.#storeError('claim', record.key, error)
    }
  }

  async complete (key: string, leaseToken: string, outcome: { expiry: number, responseData?: string },
    options?: StoreCallOptions): Promise<boolean> {
    const { UpdateExpression, ExpressionAttributeNames, ExpressionAttributeValues } =
      completionUpdate(this.#names, outcome)
    return await this.#fenced('complete', key, leaseToken, () => this.#statements.complete(key, leaseToken, outcome),
      UpdateExpression, ExpressionAttributeNames, ExpressionAttributeValues, options)
  }

  async fail (key: string, leaseToken: string, outcome: { expiry: number, error: StoredError },
    options?: StoreCallOptions): Promise<boolean> {
    const { UpdateExpression, ExpressionAttributeNames, ExpressionAttributeValues } =
      failureUpdate(this.#names, outcome)
    return await this.#fenced('fail', key, leaseToken, () => this.#statements.fail(key, leaseToken, outcome),
      UpdateExpression, ExpressionAttributeNames, ExpressionAttributeValues, options)
  }

  async release (key: string, leaseToken: string, options?: StoreCallOptions): Promise<boolean> {
    return await this.#fenced('release', key, leaseToken, () => this.#statements.release(key, leaseToken),
      undefined, {}, {}, options)
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
        const output = await this.#client.send('BatchGetItem', {
          // A claim decision needs the latest write, so reads are strongly consistent.
          RequestItems: { [this.tableName]: { Keys: chunk.map((key) => this.#keyOf(key)), ConsistentRead: true } }
        }, options) as { Responses?: Record<string, Item[]> }
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

  /** The claim's conditional PutItem: a refused claim returns the record in the way (ALL_OLD). */
  async #claimAlone (record: ClaimRecord, nowMs: number,
    options: StoreCallOptions | undefined): Promise<IdempotencyRecord | undefined> {
    try {
      await this.#client.send('PutItem', {
        TableName: this.tableName,
        Item: this.#toItem(record),
        ...claimCondition(this.#names, nowMs)
      }, options)
      return undefined
    } catch (error) {
      const old = isConditionFailure(error) ? (error as { Item?: Item }).Item : undefined
      // An empty ALL_OLD cannot happen for a refused claim; treat it as a store fault, never as "claimed".
      if (old !== undefined) return this.#fromItem(old)
      throw error
    }
  }

  /** Complete, fail or release: one statement grouped with others, or its single-item request. */
  async #fenced (operation: 'complete' | 'fail' | 'release', key: string, leaseToken: string,
    statement: () => Statement, update: string | undefined, names: Record<string, string>, values: Item,
    options: StoreCallOptions | undefined): Promise<boolean> {
    try {
      return await this.#write(key, () => groupedFenced(statement(), operation === 'release'),
        async () => await this.#fencedAlone(key, leaseToken, update, names, values, options), options)
    } catch (error) {
      throw await this.#storeError(operation, key, error)
    }
  }

  /** The fenced UpdateItem (or DeleteItem, without `update`): false when the lease token no longer holds the record. */
  async #fencedAlone (key: string, leaseToken: string, update: string | undefined, names: Record<string, string>,
    values: Item, options: StoreCallOptions | undefined): Promise<boolean> {
    const fence = leaseFence(this.#names, leaseToken)
    const common = {
      TableName: this.tableName,
      Key: this.#keyOf(key),
      ConditionExpression: fence.ConditionExpression,
      ExpressionAttributeNames: { ...names, ...fence.ExpressionAttributeNames },
      ExpressionAttributeValues: { ...values, ...fence.ExpressionAttributeValues }
    }
    try {
      await (update === undefined
        ? this.#client.send('DeleteItem', common, options)
        : this.#client.send('UpdateItem', { ...common, UpdateExpression: update }, options))
      return true
    } catch (error) {
      if (isConditionFailure(error)) return false
      throw error
    }
  }

  /** A write grouped with the others made beside it, or alone (grouping off, or not allowed to the role). */
  async #write<T> (key: string, grouped: () => Grouped<T>, alone: () => Promise<T>,
    options: StoreCallOptions | undefined): Promise<T> {
    if (this.#grouped?.active !== true) return await alone()
    return await this.#grouped.write(key, grouped(), alone, options)
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

  async #storeError (operation: StoreOperation, key: string | undefined,
    error: unknown): Promise<IdempotencyStoreError> {
    return storeErrorOf(this.tableName, operation, key, error, await this.#fit.explain(error))
  }
}
