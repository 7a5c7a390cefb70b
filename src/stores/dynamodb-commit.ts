import type { DynamoDBSender } from './dynamodb-store.js'
import type { CommitOutcome, CommitResult, IdempotencyRecord, TransactItem } from './store.js'

/** What the commit needs to know of the store's table and its attribute names. */
export interface CommitTarget {
  client: DynamoDBSender
  tableName: string
  /** The record's key in native form (partition key, and sort key when there is one). */
  key: Record<string, string>
  names: { keyAttr: string, statusAttr: string, expiryAttr: string, inProgressExpiryAttr: string, leaseTokenAttr: string, payloadHashAttr: string, responseDataAttr: string, errorAttr: string }
  /** Reads a stored item (as DynamoDB returns it in a cancellation reason) into a record. */
  fromItem: (item: Record<string, any>) => IdempotencyRecord
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
export const commitTransaction = async (target: CommitTarget, leaseToken: string, outcome: CommitOutcome, writes: readonly TransactItem[], claim?: { nowMs: number }): Promise<CommitResult> => {
  const { DynamoDBDocumentClient, TransactWriteCommand } = await loadLib()
  // The user's entries are in native values: a document client marshals them (the user's own,
  // with its marshalling options, when the store was given one).
  const client = isDocumentClient(target.client)
    ? target.client
    : documentClients.get(target.client) ?? remember(target.client, DynamoDBDocumentClient.from(target.client as never))
  try {
    await client.send(new TransactWriteCommand({
      TransactItems: [...writes, claim === undefined ? fencedCompletion(target, leaseToken, outcome) : claimingCompletion(target, leaseToken, outcome, claim.nowMs)] as never,
      // An SDK retry of a commit whose answer was lost is then answered as the first one was,
      // instead of meeting its own completion. One commit per claim, so the token is unique.
      ClientRequestToken: leaseToken
    }) as never)
    return { status: 'committed' }
  } catch (error) {
    return readCancellation(error, writes.length, target, leaseToken, claim !== undefined)
  }
}

/** The claimed record becomes COMPLETED: only while it is ours and IN_PROGRESS. */
const fencedCompletion = (target: CommitTarget, leaseToken: string, outcome: CommitOutcome) => {
  const n = target.names
  return {
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
}

/** `effects: 'transact-only'`: the COMPLETED record is put on the claim's own condition (DESIGN §2). */
const claimingCompletion = (target: CommitTarget, leaseToken: string, outcome: CommitOutcome, nowMs: number) => {
  const n = target.names
  return {
    Put: {
      TableName: target.tableName,
      Item: {
        ...target.key,
        [n.statusAttr]: 'COMPLETED',
        [n.expiryAttr]: outcome.expiry,
        [n.leaseTokenAttr]: leaseToken,
        ...(outcome.payloadHash === undefined ? {} : { [n.payloadHashAttr]: outcome.payloadHash }),
        ...(outcome.responseData === undefined ? {} : { [n.responseDataAttr]: outcome.responseData })
      },
      ConditionExpression: 'attribute_not_exists(#key) OR #expiry < :nowSeconds OR (#status = :inProgress AND #lease < :nowMs)',
      ExpressionAttributeNames: { '#key': n.keyAttr, '#expiry': n.expiryAttr, '#status': n.statusAttr, '#lease': n.inProgressExpiryAttr },
      ExpressionAttributeValues: { ':nowSeconds': Math.floor(nowMs / 1000), ':nowMs': nowMs, ':inProgress': 'IN_PROGRESS' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const
    }
  }
}

const remember = (client: DynamoDBSender, doc: { send: DynamoDBSender['send'] }): { send: DynamoDBSender['send'] } => {
  documentClients.set(client, doc)
  return doc
}

/** A `DynamoDBDocumentClient` keeps its marshalling options under `config.translateConfig`. */
const isDocumentClient = (client: DynamoDBSender): boolean =>
  typeof (client as { config?: { translateConfig?: unknown } }).config?.translateConfig === 'object'

interface Reason { Code?: string, Message?: string, Item?: Record<string, any> }

/**
 * What a `TransactionCanceledException` says: which entry refused and why, or that the
 * completion met our own committed record (a retry whose first answer was lost). Anything
 * else is rethrown.
 */
const readCancellation = (error: unknown, completionIndex: number, target: CommitTarget, leaseToken: string, unclaimed: boolean): CommitResult => {
  const { name, CancellationReasons: reasons } = (error ?? {}) as { name?: string, CancellationReasons?: Reason[] }
  if (name !== 'TransactionCanceledException' || !Array.isArray(reasons)) throw error
  const completion = reasons[completionIndex]
  if (completion?.Code === 'ConditionalCheckFailed') {
    // The retry of a commit that had landed meets our own completion: it is ours, committed.
    const stored = target.fromItem(completion.Item ?? {})
    if (stored.leaseToken === leaseToken && stored.status === 'COMPLETED') return { status: 'committed' }
    return unclaimed ? { status: 'taken', record: stored } : { status: 'lease-lost' }
  }
  const entry = reasons.findIndex((r) => r.Code !== undefined && r.Code !== 'None')
  const blamed = reasons[entry]
  if (entry === -1 || entry === completionIndex || blamed === undefined) {
    return { status: 'refused', code: completion?.Code ?? 'Unknown', message: completion?.Message ?? (error as Error).message }
  }
  return { status: 'refused', entry, code: blamed.Code ?? 'Unknown', message: blamed.Message ?? (error as Error).message }
}
