import { IdempotencyConfigError } from '../../errors.js'
import type { StoreCallOptions } from '../store.js'

/*
 * How the store talks to DynamoDB, whatever the client: one call, an operation of DynamoDB's JSON
 * API and its input, resolving its output, both in the API's own shape (items in DynamoDB JSON),
 * or rejecting with an error named for DynamoDB's error code (`ConditionalCheckFailedException`,
 * `AccessDeniedException`...). The store's logic is written once, on this. Two clients implement
 * it: the AWS SDK v3 (a `DynamoDBClient` or `DynamoDBDocumentClient`, loaded only when one is
 * used) and `@aws-lite/client` (its raw request call, with or without the `@aws-lite/dynamodb`
 * plugin), which signs and sends the same JSON without the SDK at cold start.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.LowLevelAPI.html
 */

/**
 * What the store sends: an operation of DynamoDB's JSON API and its input (the client of
 * `CommitTarget`). Internal to the store; made from the client it is given.
 *
 * @example
 * ```ts
 * const { Item } = await target.client.send('GetItem', {
 *   TableName: target.tableName, Key: target.key, ConsistentRead: true
 * })
 * ```
 */
export interface DynamoDBWire {
  /**
   * Sends one request of `operation`; resolves its output, or rejects with an error named for DynamoDB's
   * error code.
   */
  send: (operation: DynamoDBOperation, input: object, options?: { signal?: AbortSignal }) => Promise<any>
  /** A DynamoDBDocumentClient's marshalling options, for `transact` entries in native values. */
  marshallOptions?: { removeUndefinedValues?: boolean, convertClassInstanceToMap?: boolean }
}

/**
 * The operations the store and its operator functions send.
 *
 * @example
 * ```ts
 * const operation: DynamoDBOperation = 'BatchExecuteStatement'
 * ```
 */
export type DynamoDBOperation = 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'GetItem' | 'BatchGetItem' | 'Scan'
  | 'BatchExecuteStatement' | 'TransactWriteItems' | 'DescribeTable' | 'DescribeTimeToLive' | 'CreateTable'
  | 'UpdateTimeToLive'

/**
 * An AWS SDK v3 client: a `DynamoDBClient` or a `DynamoDBDocumentClient` (its low-level `send`
 * is used with the SDK's own commands; the store marshals its own items).
 */
export interface SdkSender { send: (command: any, options?: any) => Promise<any> }

/**
 * An `@aws-lite/client` instance (`await awsLite({ region })`), with or without the
 * `@aws-lite/dynamodb` plugin: the store uses its raw request call. A function that does not use
 * the AWS SDK then does not load it at cold start.
 *
 * @example
 * ```ts
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', client: await awsLite({ region: 'eu-west-1' }) })
 * ```
 */
export type DynamoDBAwsLiteClient = (request: {
  service: string
  headers?: Record<string, string>
  payload?: object
  awsjson?: boolean
}) => Promise<unknown>

type SdkModule = typeof import('@aws-sdk/client-dynamodb')

/** The SDK's command of each operation. */
const commandOf = (sdk: SdkModule, operation: DynamoDBOperation): new (input: any) => unknown => ({
  PutItem: sdk.PutItemCommand,
  UpdateItem: sdk.UpdateItemCommand,
  DeleteItem: sdk.DeleteItemCommand,
  GetItem: sdk.GetItemCommand,
  BatchGetItem: sdk.BatchGetItemCommand,
  Scan: sdk.ScanCommand,
  BatchExecuteStatement: sdk.BatchExecuteStatementCommand,
  TransactWriteItems: sdk.TransactWriteItemsCommand,
  DescribeTable: sdk.DescribeTableCommand,
  DescribeTimeToLive: sdk.DescribeTimeToLiveCommand,
  CreateTable: sdk.CreateTableCommand,
  UpdateTimeToLive: sdk.UpdateTimeToLiveCommand
})[operation]

let sdkModule: Promise<SdkModule> | undefined

/**
 * The SDK, imported when first needed: a function given an `@aws-lite/client` never loads it.
 * A user who made an SDK client has it loaded already, so this import costs no more than a
 * module lookup.
 */
export const loadSdk = async (): Promise<SdkModule> => await (sdkModule ??= import('@aws-sdk/client-dynamodb'))

/** The wire over an SDK client, or over the one made from `clientConfig` on first use. */
export const sdkWire = (client: SdkSender | (() => Promise<SdkSender>)): DynamoDBWire => {
  let made: Promise<SdkSender> | undefined
  const sender = async (): Promise<SdkSender> => typeof client === 'function' ? await (made ??= client()) : client
  type WithMarshallOptions = { config?: { translateConfig?: { marshallOptions?: DynamoDBWire['marshallOptions'] } } }
  const config = typeof client === 'function' ? undefined : (client as WithMarshallOptions).config
  return {
    send: async (operation, input, options) => {
      const [sdk, target] = await Promise.all([loadSdk(), sender()])
      const Command = commandOf(sdk, operation)
      return await target.send(new Command(input), options?.signal === undefined ? {} : { abortSignal: options.signal })
    },
    ...(config?.translateConfig?.marshallOptions === undefined
      ? {}
      : { marshallOptions: config.translateConfig.marshallOptions })
  }
}

/** An error of DynamoDB as `@aws-lite/client` reports it, named as the SDK names it. */
export class DynamoDBWireError extends Error {
  /** The old item of a refused condition, with `ReturnValuesOnConditionCheckFailure: ALL_OLD`. */
  Item?: Record<string, unknown>
  /** The reasons of a cancelled transaction, one per entry. */
  CancellationReasons?: unknown[]
  /** The HTTP status DynamoDB answered. */
  statusCode?: number
}

/** A DynamoDB error code (`com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException`) without its namespace. */
const shortName = (code: unknown): string | undefined =>
  typeof code === 'string' ? code.slice(code.lastIndexOf('#') + 1) : undefined

/**
 * The wire over an `@aws-lite/client`: its raw request call (the `@aws-lite/dynamodb` plugin
 * marshals plain values, and the store already speaks DynamoDB JSON). Its errors are given the
 * name and message of DynamoDB's error, as the SDK's are, and keep the client's error as `cause`.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html
 */
export const awsLiteWire = (client: DynamoDBAwsLiteClient): DynamoDBWire => ({
  send: async (operation, input, options) => {
    try {
      // @aws-lite/client takes no abort signal: a request given up is no longer waited for (its
      // socket stays until it answers), so that nothing queued behind it waits with it.
      const { payload } = await untilAborted(options?.signal, client({
        service: 'dynamodb',
        headers: { 'X-Amz-Target': `DynamoDB_20120810.${operation}`, 'content-type': 'application/x-amz-json-1.0' },
        payload: input,
        awsjson: false
      })) as { payload?: unknown }
      return payload ?? {}
    } catch (error) {
      const raw = (error ?? {}) as {
        __type?: unknown
        code?: unknown
        name?: unknown
        message?: unknown
        Message?: unknown
        Item?: unknown
        CancellationReasons?: unknown
        statusCode?: unknown
      }
      const name = shortName(raw.__type) ?? shortName(raw.code) ?? (typeof raw.name === 'string' ? raw.name : 'Error')
      // The client prefixes DynamoDB's message with its own name ("@aws-lite/client: dynamodb: ...").
      const message = String(raw.Message ?? raw.message ?? '').replace(/^@aws-lite\/client: [^:]*: /, '')
      const mapped = new DynamoDBWireError(message, { cause: error })
      mapped.name = name
      if (raw.Item !== undefined) mapped.Item = raw.Item as Record<string, unknown>
      if (Array.isArray(raw.CancellationReasons)) mapped.CancellationReasons = raw.CancellationReasons
      if (typeof raw.statusCode === 'number') mapped.statusCode = raw.statusCode
      throw mapped
    }
  }
})

/** The wire of the client given (or of the SDK client made from `clientConfig` when none is). */
export const wireOf = (client: unknown, makeDefault: () => Promise<SdkSender>): DynamoDBWire => {
  if (client === undefined) return sdkWire(makeDefault)
  if (typeof (client as SdkSender | undefined)?.send === 'function') return sdkWire(client as SdkSender)
  // An @aws-lite/client instance is a function carrying its config (region, endpoint...).
  if (typeof client === 'function' && typeof (client as { config?: unknown }).config === 'object') {
    return awsLiteWire(client as DynamoDBAwsLiteClient)
  }
  throw new IdempotencyConfigError(
    'DynamoDBStore: client must be a DynamoDBClient, a DynamoDBDocumentClient or an @aws-lite/client instance')
}

/** `request`, or its signal's reason once the signal aborts, whichever comes first. */
const untilAborted = async <T>(signal: AbortSignal | undefined, request: Promise<T>): Promise<T> => {
  if (signal === undefined) return await request
  signal.throwIfAborted()
  let stop: (() => void) | undefined
  const aborted = new Promise<never>((_resolve, reject) => {
    stop = () => { reject(signal.reason) }
    signal.addEventListener('abort', stop, { once: true })
  })
  try {
    return await Promise.race([request, aborted])
  } finally {
    signal.removeEventListener('abort', stop as () => void)
  }
}

/**
 * The SDK's options for a call the lifecycle may give up: an aborted request is closed, so a
 * blackholed endpoint does not keep a socket of the client's pool for the rest of the process.
 */
export const abortable = (options: StoreCallOptions | undefined): { abortSignal?: AbortSignal } =>
  options?.signal === undefined ? {} : { abortSignal: options.signal }
