import type { TransactWriteItem } from '@aws-sdk/client-dynamodb'
import type { CommitOutcome, CommitResult } from '../store.js'
import type { Item } from './items.js'
import { toAttributeMap, UnmarshallableValueError, type MarshallOptions } from './marshal.js'
import { claimCondition } from './claim-condition.js'
import { completionUpdate } from './completion.js'
import type { CommitTarget, DynamoDBTransactions, TransactItem } from './types.js'
import { DynamoDBWireError } from './wire.js'

const OPERATIONS = ['Put', 'Update', 'Delete', 'ConditionCheck'] as const

/** Why `item` is not a `TransactWriteItems` entry, or undefined when it is one. */
export const checkTransactItem = (item: unknown): string | undefined => {
  if (item === null || typeof item !== 'object') return 'it is not an object'
  const keys = Object.keys(item)
  const operation = keys[0] as (typeof OPERATIONS)[number]
  if (keys.length !== 1 || !OPERATIONS.includes(operation)) {
    return `it must have exactly one of ${OPERATIONS.join(', ')} (it has ${keys.join(', ') || 'none'})`
  }
  const body = (item as Record<string, { TableName?: unknown } | null>)[operation]
  if (typeof body?.TableName !== 'string' || body.TableName === '') return `its ${operation} has no TableName`
  return undefined
}

/**
 * One `TransactWriteItems`: the user's writes, then our completion fenced by the lease token
 * and by `IN_PROGRESS`. All or nothing: a refusal anywhere applies none of them.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
 */
export const commitTransaction = async (
  target: CommitTarget,
  leaseToken: string,
  outcome: CommitOutcome,
  writes: readonly TransactItem[],
  claim?: { nowMs: number }
): Promise<CommitResult> => {
  // The user's entries are in native values; a document client's own marshalling options apply.
  const options: MarshallOptions = target.client.marshallOptions ?? {}
  let entries: TransactWriteItem[]
  try {
    entries = writes.map((write, i) => marshalEntry(write, i, options))
  } catch (error) {
    if (!(error instanceof UnmarshallableValueError)) throw error
    const entry = Number(/^entry (\d+)/.exec(error.path)?.[1])
    return { status: 'refused', entry, code: 'ValidationError', message: error.message, reason: 'invalid' }
  }
  try {
    await target.client.send('TransactWriteItems', {
      TransactItems: [...entries, claim === undefined
        ? fencedCompletion(target, leaseToken, outcome)
        : claimingCompletion(target, leaseToken, outcome, claim.nowMs)],
      // An SDK retry of a commit whose answer was lost is then answered as the first one was,
      // instead of meeting its own completion. One commit per claim, so the token is unique.
      ClientRequestToken: leaseToken
    }, sendOptions(target))
    return { status: 'committed' }
  } catch (error) {
    const refusal = readCancellation(error, writes, target, leaseToken, claim !== undefined)
    if (refusal.status !== 'refused' || refusal.reason !== 'temporary' || !retriedOverALostAnswer(error)) return refusal
    return await landedAfterAll(target, leaseToken, refusal)
  }
}

const sendOptions = (target: CommitTarget): { signal?: AbortSignal } =>
  target.abortSignal === undefined ? {} : { signal: target.abortSignal }

/**
 * Throttled in the end, but after several attempts: an earlier one may have landed and lost its
 * answer (its retries then met throttling). The SDK says how many attempts it made; @aws-lite/client
 * does not, and retries throttling too: its refusal is read back as well.
 */
const retriedOverALostAnswer = (error: unknown): boolean =>
  error instanceof DynamoDBWireError ||
  ((error as { $metadata?: { attempts?: number } } | null)?.$metadata?.attempts ?? 1) > 1

/**
 * Whether the commit landed after all, read back from the record (consistently): the
 * transaction is all or nothing, so our COMPLETED record means all of it applied, and our record
 * still IN_PROGRESS means none did. A read that fails leaves it unknown: the error is thrown and
 * the lease kept, never a release over writes that may have applied.
 */
const landedAfterAll = async (
  target: CommitTarget,
  leaseToken: string,
  refusal: CommitResult
): Promise<CommitResult> => {
  const request = { TableName: target.tableName, Key: target.key, ConsistentRead: true }
  const { Item } = await target.client.send('GetItem', request, sendOptions(target)) as { Item?: Item }
  const stored = Item === undefined ? undefined : target.fromItem(Item)
  if (stored?.leaseToken === leaseToken && stored.status === 'COMPLETED') return { status: 'committed' }
  return refusal
}

/** A user's entry, its native values marshalled; the path of a value that cannot be names the entry. */
const marshalEntry = (write: TransactItem, index: number, options: MarshallOptions): TransactWriteItem => {
  const [operation, body] = Object.entries(write)[0] as [string, Record<string, unknown>]
  const marshalled: Record<string, unknown> = { ...body }
  for (const field of ['Item', 'Key', 'ExpressionAttributeValues']) {
    if (body[field] !== undefined) {
      const path = `entry ${index} (${operation} on ${String(body.TableName)}) ${field}`
      marshalled[field] = toAttributeMap(body[field] as Record<string, unknown>, path, options)
    }
  }
  return { [operation]: marshalled } as TransactWriteItem
}

/** The claimed record becomes COMPLETED: only while it is ours and IN_PROGRESS. */
const fencedCompletion = (target: CommitTarget, leaseToken: string, outcome: CommitOutcome): TransactWriteItem => {
  const update = completionUpdate(target.names, outcome)
  return {
    Update: {
      TableName: target.tableName,
      Key: target.key,
      ...update,
      ConditionExpression: '#token = :token AND #status = :inProgress',
      ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#token': target.names.leaseTokenAttr },
      ExpressionAttributeValues: {
        ...update.ExpressionAttributeValues, ':token': { S: leaseToken }, ':inProgress': { S: 'IN_PROGRESS' }
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD'
    }
  }
}

/**
 * `effects: 'transact-only'`: the COMPLETED record is put on the claim's own condition (docs/transact.md:
 * one request per new record; docs/stores.md: Transactions).
 */
const claimingCompletion = (
  target: CommitTarget,
  leaseToken: string,
  outcome: CommitOutcome,
  nowMs: number
): TransactWriteItem => {
  const n = target.names
  return {
    Put: {
      TableName: target.tableName,
      Item: {
        ...target.key,
        [n.statusAttr]: { S: 'COMPLETED' },
        [n.expiryAttr]: { N: String(outcome.expiry) },
        [n.leaseTokenAttr]: { S: leaseToken },
        ...(outcome.payloadHash === undefined ? {} : { [n.payloadHashAttr]: { S: outcome.payloadHash } }),
        ...(outcome.responseData === undefined ? {} : { [n.responseDataAttr]: { S: outcome.responseData } })
      },
      ...claimCondition(n, nowMs)
    }
  }
}

// Requests DynamoDB refused before applying anything, for want of capacity: a later try may pass.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html
const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'])
// Cancellation reasons that say nothing about the writes themselves (another transaction, throttling).
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#API_TransactWriteItems_Errors
const TEMPORARY_REASONS = new Set(['TransactionConflict', 'ProvisionedThroughputExceeded', 'ThrottlingError'])

interface Reason { Code?: string, Message?: string, Item?: Item }

/**
 * What a refused commit says. Cancelled: which entry refused and why, or that the completion
 * met our own committed record (a retry whose first answer was lost). Refused whole (invalid, a
 * missing table, a denied role, credentials not accepted) or throttled: nothing was applied, so
 * the refusal is certain, not a "did it land?". Anything else (network, 5xx, a request token still
 * in progress) is rethrown: whether it landed is unknown, and the lease is kept.
 */
const REFUSED_WHOLE = new Set(['ValidationException', 'ResourceNotFoundException', 'AccessDeniedException',
  // Credentials or a signature AWS does not accept: refused before anything is read.
  // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html
  'UnrecognizedClientException', 'InvalidSignatureException', 'IncompleteSignature', 'MissingAuthenticationToken'])

const readCancellation = (
  error: unknown,
  writes: readonly TransactItem[],
  target: CommitTarget,
  leaseToken: string,
  unclaimed: boolean
): CommitResult => {
  const { name = '', message = '', CancellationReasons: reasons } =
    (error ?? {}) as { name?: string, message?: string, CancellationReasons?: Reason[] }
  if (THROTTLED.has(name)) return { status: 'refused', code: name, message, reason: 'temporary' }
  // Refused whole, for certain, for a reason no retry passes: an invalid entry, a table that does
  // not exist (a typo), or a role that may not write one of the tables. Nothing was applied.
  if (REFUSED_WHOLE.has(name)) {
    // DynamoDB does not say which entry is at fault: name the one there is, or every table written.
    const tables = writes.map((w, i) => `entry ${i} ${Object.keys(w)[0] ?? ''} on ${tableOf(w)}`).join(', ')
    return {
      status: 'refused',
      ...(writes.length === 1 ? { entry: 0 } : {}),
      code: name,
      message: `${message} (${tables}; the completion on ${target.tableName})`,
      reason: 'invalid'
    }
  }
  if (name !== 'TransactionCanceledException' || !Array.isArray(reasons)) throw error
  const completionIndex = writes.length
  const completion = reasons[completionIndex]
  if (completion?.Code === 'ConditionalCheckFailed') {
    const stored = target.fromItem(completion.Item ?? {})
    if (stored.leaseToken === leaseToken && stored.status === 'COMPLETED') return { status: 'committed' }
    return unclaimed ? { status: 'taken', record: stored } : { status: 'lease-lost' }
  }
  const entry = reasons.findIndex((r) => r.Code !== undefined && r.Code !== 'None')
  const blamed = entry === -1 || entry === completionIndex ? completion : reasons[entry]
  const code = blamed?.Code ?? 'Unknown'
  const where = entry === -1 || entry === completionIndex ? {} : { entry }
  const detail = entry === -1 || entry === completionIndex ? '' : ` (on ${tableOf(writes[entry] as TransactItem)})`
  return {
    status: 'refused',
    ...where,
    code,
    message: `${blamed?.Message ?? message}${detail}`,
    reason: TEMPORARY_REASONS.has(code) ? 'temporary' : code === 'ValidationError' ? 'invalid' : 'condition'
  }
}

const tableOf = (write: TransactItem): string =>
  String((Object.values(write)[0] as { TableName?: unknown } | undefined)?.TableName)

/**
 * The DynamoDB transaction writer, for `transact` and `effects: 'transact-only'`: give it to the
 * store as its `transactions` option. A store built without it has no `commit`, so a function
 * that never transacts does not bundle nor load this code.
 *
 * @example
 * ```ts
 * import { DynamoDBStore, transactions } from 'middy-idempotency/dynamodb'
 *
 * const store = new DynamoDBStore({ tableName: 'IdempotencyStore', transactions })
 * ```
 */
export const transactions: DynamoDBTransactions = { commit: commitTransaction, checkWrite: checkTransactItem }
