import type { DynamoDBSender } from './dynamodb-store.js'
import type { CommitResult, TransactItem } from './store.js'

/** What the commit needs to know of the store's table and its attribute names. */
export interface CommitTarget {
  client: DynamoDBSender
  tableName: string
  /** The record's key in native form (partition key, and sort key when there is one). */
  key: Record<string, string>
  names: { statusAttr: string, expiryAttr: string, leaseTokenAttr: string, responseDataAttr: string, errorAttr: string }
}

type LibDynamoDB = typeof import('@aws-sdk/lib-dynamodb')
let lib: Promise<LibDynamoDB> | undefined
// Loaded on the first commit only: a handler that never calls `transact` never pays for it
// at cold start. lib-dynamodb is an optional peer, present in the Lambda Node.js runtimes.
const loadLib = async (): Promise<LibDynamoDB> => await (lib ??= import('@aws-sdk/lib-dynamodb'))

const documentClients = new WeakMap<object, { send: DynamoDBSender['send'] }>()

/**
 * One `TransactWriteItems`: the user's writes, then our completion fenced by the lease token
 * and by `IN_PROGRESS`. All or nothing: a refusal anywhere applies none of them.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
 */
export const commitTransaction = async (target: CommitTarget, leaseToken: string, outcome: { expiry: number, responseData?: string }, writes: readonly TransactItem[]): Promise<CommitResult> => {
  const { DynamoDBDocumentClient, TransactWriteCommand } = await loadLib()
  // The user's entries are in native values: a document client marshals them (the user's own,
  // with its marshalling options, when the store was given one).
  const client = isDocumentClient(target.client)
    ? target.client
    : documentClients.get(target.client) ?? remember(target.client, DynamoDBDocumentClient.from(target.client as never))
  const n = target.names
  const completion = {
    Update: {
      TableName: target.tableName,
      Key: target.key,
      UpdateExpression: 'SET #status = :completed, #expiry = :expiry' + (outcome.responseData === undefined ? ' REMOVE #data, #error' : ', #data = :data REMOVE #error'),
      ConditionExpression: '#token = :token AND #status = :inProgress',
      ExpressionAttributeNames: { '#status': n.statusAttr, '#expiry': n.expiryAttr, '#token': n.leaseTokenAttr, '#data': n.responseDataAttr, '#error': n.errorAttr },
      ExpressionAttributeValues: {
        ':completed': 'COMPLETED',
        ':inProgress': 'IN_PROGRESS',
        ':expiry': outcome.expiry,
        ':token': leaseToken,
        ...(outcome.responseData === undefined ? {} : { ':data': outcome.responseData })
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const
    }
  }
  try {
    await client.send(new TransactWriteCommand({
      TransactItems: [...writes, completion] as never,
      // An SDK retry of a commit whose answer was lost is then answered as the first one was,
      // instead of meeting its own completion. One commit per claim, so the token is unique.
      ClientRequestToken: leaseToken
    }) as never)
    return { status: 'committed' }
  } catch (error) {
    return refusal(error, writes.length, target, leaseToken)
  }
}

const remember = (client: DynamoDBSender, doc: { send: DynamoDBSender['send'] }): { send: DynamoDBSender['send'] } => {
  documentClients.set(client, doc)
  return doc
}

/** A `DynamoDBDocumentClient` keeps its marshalling options under `config.translateConfig`. */
const isDocumentClient = (client: DynamoDBSender): boolean =>
  typeof (client as { config?: { translateConfig?: unknown } }).config?.translateConfig === 'object'

interface Reason { Code?: string, Message?: string, Item?: Record<string, { S?: string } | string | undefined> }

/** Reads a `TransactionCanceledException`: which entry refused and why. Anything else is rethrown. */
const refusal = (error: unknown, fenceIndex: number, target: CommitTarget, leaseToken: string): CommitResult => {
  const { name, CancellationReasons: reasons } = (error ?? {}) as { name?: string, CancellationReasons?: Reason[] }
  if (name !== 'TransactionCanceledException' || !Array.isArray(reasons)) throw error
  const fence = reasons[fenceIndex]
  if (fence?.Code === 'ConditionalCheckFailed') {
    // The retry of a commit that had landed meets our own completion: it is ours, committed.
    const stored = fence.Item ?? {}
    const read = (attr: string): string | undefined => { const v = stored[attr]; return typeof v === 'string' ? v : v?.S }
    const ours = read(target.names.leaseTokenAttr) === leaseToken && read(target.names.statusAttr) === 'COMPLETED'
    return { status: ours ? 'committed' : 'lease-lost' }
  }
  const entry = reasons.findIndex((r) => r.Code !== undefined && r.Code !== 'None')
  const blamed = reasons[entry]
  if (entry === -1 || entry === fenceIndex || blamed === undefined) {
    return { status: 'refused', code: fence?.Code ?? 'Unknown', message: fence?.Message ?? (error as Error).message }
  }
  return { status: 'refused', entry, code: blamed.Code ?? 'Unknown', message: blamed.Message ?? (error as Error).message }
}
