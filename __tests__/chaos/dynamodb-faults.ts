import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { Invocation } from './invocation.js'
import { streamFor } from './prng.js'

/**
 * The store step a DynamoDB request belongs to, read off the command (DESIGN §2). A
 * `TransactWriteItems` is the completion of a record whose work queued `transact` writes
 * (DESIGN §3.9): it is the 'complete' step, and meets the completion's faults and crashes.
 */
export type StoreStep = 'claim' | 'complete' | 'fail' | 'release' | 'read'

/** What DynamoDB Local cannot do by itself, so it is injected. */
export type FaultKind =
  | 'ProvisionedThroughputExceededException'
  | 'ThrottlingException'
  | 'InternalServerError'
  | 'network-timeout' // the request never reached the table
  | 'answer-lost' // the write reached the table, the answer did not reach us

export const FAULT_KINDS: readonly FaultKind[] = ['ProvisionedThroughputExceededException', 'ThrottlingException', 'InternalServerError', 'network-timeout', 'answer-lost']
export const STORE_STEPS: readonly StoreStep[] = ['claim', 'complete', 'fail', 'release', 'read']

export interface FaultCounters {
  /** Attempts that met an injected fault, by `step:kind` (the SDK may retry them away). */
  injected: Map<string, number>
  /** Requests that still failed after the SDK's retries, by step: the core saw these. */
  surfaced: Map<string, number>
}

export const newFaultCounters = (): FaultCounters => ({ injected: new Map(), surfaced: new Map() })

const bump = (map: Map<string, number>, key: string): void => { map.set(key, (map.get(key) ?? 0) + 1) }

/** The SDK's per-command context; the probe leaves the invocation on it for every retry attempt. */
interface Command { commandName?: string, chaosInvocation?: Invocation }
interface Args { input: Record<string, any> }

const stepOf = (commandName: string | undefined, input: Record<string, any>): StoreStep | undefined => {
  switch (commandName) {
    case 'PutItemCommand': return 'claim'
    case 'DeleteItemCommand': return 'release'
    case 'BatchGetItemCommand': return 'read'
    case 'UpdateItemCommand': return input.ExpressionAttributeValues?.[':status']?.S === 'COMPLETED' ? 'complete' : 'fail'
    case 'TransactWriteItemsCommand': return 'complete'
    default: return undefined
  }
}

/**
 * The completion is the last entry of a commit (the user's writes come first): an `Update` of
 * the claimed record, or, with `effects: 'transact-only'`, the `Put` that claims as it completes.
 */
const completionOf = (input: Record<string, any>): Record<string, any> | undefined => {
  const last = input.TransactItems?.[input.TransactItems.length - 1]
  return last?.Update ?? last?.Put
}

/** A string attribute, marshalled (`{ S }`, as the fault layer sees it) or native (before lib-dynamodb marshals it). */
const text = (value: any): string | undefined => typeof value === 'string' ? value : value?.S

const keyOf = (step: StoreStep, input: Record<string, any>): string => {
  if (step === 'read') return 'batch'
  const completion = completionOf(input)
  const item = step === 'claim' ? input.Item : input.TransactItems === undefined ? input.Key : completion?.Key ?? completion?.Item
  return String(text(item?.idempotencyKey))
}

/** What a cancelled commit says: refused by our fence (and whether the record is ours, COMPLETED), or by a user's entry. */
const cancellation = (error: any, input: Record<string, any>): { fence: 'ours' | 'taken' } | { refused: string } | undefined => {
  const reasons = error?.CancellationReasons as Array<{ Code?: string, Item?: Record<string, any> }> | undefined
  if (error?.name !== 'TransactionCanceledException' || !Array.isArray(reasons)) return undefined
  const fence = reasons[reasons.length - 1]
  if (fence?.Code === 'ConditionalCheckFailed') {
    const mine = text(fence.Item?.leaseToken) === input.ClientRequestToken && text(fence.Item?.status) === 'COMPLETED'
    return { fence: mine ? 'ours' : 'taken' }
  }
  const blamed = reasons.findIndex((r) => r.Code !== undefined && r.Code !== 'None')
  return { refused: `entry ${blamed} ${reasons[blamed]?.Code ?? 'unknown'}` }
}

/** Errors shaped like the SDK's, so its retry strategy classifies them as it would the real ones. */
const errorFor = (kind: FaultKind): Error => {
  switch (kind) {
    case 'ProvisionedThroughputExceededException':
    case 'ThrottlingException':
      return Object.assign(new Error(`${kind} (injected by the chaos suite)`), { name: kind, $fault: 'client', $metadata: { httpStatusCode: 400 } })
    case 'InternalServerError':
      return Object.assign(new Error('Internal server error (injected by the chaos suite)'), { name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 500 } })
    case 'network-timeout':
    case 'answer-lost':
      return Object.assign(new Error('socket timed out (injected by the chaos suite)'), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} })
  }
}

export interface FaultSettings {
  seed: number
  /** Probability that a given (invocation, step, key) meets a fault at all. */
  rate: number
  /** The SDK's maxAttempts: a fault lasting this many attempts or more surfaces to the core. */
  maxAttempts: number
}

/**
 * Injects DynamoDB faults for whatever invocation `current()` says is running on this
 * client, and crashes an invocation during its completion when its fate says so.
 *
 * Two middlewares: one in `finalizeRequest` (inside the SDK's retry loop: each attempt
 * may fail), one in `initialize` (outside it: what the core finally sees).
 */
export const injectFaults = (client: DynamoDBClient, current: () => Invocation | undefined, settings: FaultSettings, counters: FaultCounters): void => {
  const attempts = new Map<string, number>()

  client.middlewareStack.add((next, context) => async (args) => {
    // Not current(): a retry attempt of a crashed invocation must not be billed to the next one.
    const invocation = (context as Command).chaosInvocation
    const input = (args as unknown as Args).input
    const step = stepOf((context as Command).commandName, input)
    if (invocation === undefined || step === undefined) return await next(args)
    const key = keyOf(step, input)
    const send = async () => {
      const output = await invocation.request(async () => await next(args))
      // The write is in the table: remember whose token it holds, for the lock audit.
      if (step === 'claim') invocation.claimed.set(key, String(input.Item?.leaseToken?.S))
      return output
    }
    const plan = streamFor(settings.seed, 'fault', invocation.id, step, key)
    const faulty = plan.chance(settings.rate)
    const kind = plan.pick(FAULT_KINDS)
    // 1..maxAttempts+1 failing attempts: some are retried away, some outlast the retries.
    const failingAttempts = plan.int(1, settings.maxAttempts + 1)
    const id = `${invocation.id}/${step}/${key}`
    const attempt = (attempts.get(id) ?? 0) + 1
    attempts.set(id, attempt)

    if (step === 'complete' && attempt === 1 && invocation.fate.crash === 'completion-before-write') return await invocation.crash('completion-before-write')
    if (step === 'complete' && attempt === 1 && invocation.fate.crash === 'completion-after-write') {
      await send()
      return await invocation.crash('completion-after-write')
    }
    if (!faulty || attempt > failingAttempts) return await send()
    bump(counters.injected, `${step}:${kind}`)
    if (kind === 'answer-lost') {
      // A refused write (condition failed) is an answer too: only a real write is "lost".
      try {
        await send()
        if (step === 'claim') invocation.claimAnswersLost.add(key)
      } catch (error) {
        const name = (error as Error).name
        if (name !== 'ConditionalCheckFailedException' && name !== 'TransactionCanceledException') throw error
      }
    }
    return await invocation.request(async () => { throw errorFor(kind) })
  }, { step: 'finalizeRequest', name: 'chaosFaultInjection' })

  client.middlewareStack.add((next, context) => async (args) => {
    const invocation = current()
    const input = (args as unknown as Args).input
    const step = stepOf((context as Command).commandName, input)
    if (invocation === undefined || step === undefined) return await next(args)
    ;(context as Command).chaosInvocation = invocation
    const key = keyOf(step, input)
    if (step === 'complete') invocation.completionSent.add(key)
    const settles = step !== 'claim' && step !== 'read'
    let output
    invocation.commandsInFlight++
    try {
      output = await next(args)
      if (step === 'complete') invocation.completed.add(key)
    } catch (error) {
      const cancelled = step === 'complete' ? cancellation(error, input) : undefined
      if (cancelled !== undefined) {
        // Read as the core reads it: its own COMPLETED record (a retried commit meeting
        // itself) is a success, another token a lost lease, anything else the user's refusal.
        if ('refused' in cancelled) invocation.transactRefused.set(key, { reason: cancelled.refused, messageId: text(input.TransactItems?.[0]?.Put?.Item?.messageId) })
        else if (cancelled.fence === 'ours') invocation.completed.add(key)
        else invocation.fencedOut.add(key)
      } else if ((error as Error).name === 'ConditionalCheckFailedException') {
        if (step === 'complete') invocation.fencedOut.add(key)
      } else {
        bump(counters.surfaced, step)
        if (step === 'complete') invocation.completionFaults.add(key)
        if (step === 'fail' || step === 'release') invocation.settleFaults.add(key)
      }
      if (settles) invocation.settle(key)
      throw error
    } finally {
      invocation.commandsInFlight--
    }
    if (settles) invocation.settle(key)
    // A crash in the middle of a batch: some records are COMPLETED, the others still in flight.
    if (step === 'complete' && invocation.fate.crash === 'mid-batch' && invocation.completed.size >= invocation.fate.crashAfterRecords) {
      return await invocation.crash('mid-batch')
    }
    return output
  }, { step: 'initialize', name: 'chaosOutcomeProbe' })
}
