import { expect, test } from '@jest/globals'
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { ClaimRecord } from '../../../src/stores/store.js'
import { freshTable, localClient } from '../../support/dynamodb.js'
import { within } from '../../support/deferred.js'

const NOW = Date.now()
const claimOf = (key: string): ClaimRecord => ({
  key, status: 'IN_PROGRESS', expiry: Math.floor(NOW / 1000) + 3600, inProgressExpiry: NOW + 30_000, leaseToken: `t-${key}`
})

/**
 * A client of DynamoDB Local whose first BatchExecuteStatement never answers, as a request to a
 * blackholed endpoint does, until the abort signal it was sent with aborts: a fault the real
 * server cannot be made to produce. `seen` keeps that signal.
 */
const hangingClient = (): { client: DynamoDBClient, seen: { signal?: AbortSignal } } => {
  const real = localClient()
  const seen: { signal?: AbortSignal } = {}
  let hung = false
  const send = async (command: { constructor: { name: string } }, options?: { abortSignal?: AbortSignal }): Promise<unknown> => {
    if (command.constructor.name !== 'BatchExecuteStatementCommand' || hung) return await real.send(command as never, options as never)
    hung = true
    seen.signal = options?.abortSignal
    return await new Promise<never>((_resolve, reject) => {
      options?.abortSignal?.addEventListener('abort', () => { reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' })) })
    })
  }
  return { client: { send } as unknown as DynamoDBClient, seen }
}

/**
 * The options of each store call of one invocation, as the lifecycle gives them: a signal of its
 * own that aborts at the invocation's deadline, and the object all its calls share.
 */
const invocation = (deadlineMs: number): () => { signal: AbortSignal, invocation: object } => {
  const shared = {}
  return () => ({ signal: AbortSignal.timeout(deadlineMs), invocation: shared })
}

test("one invocation's grouped request that never answers holds no other invocation's writes (Lambda Managed Instances)", async () => {
  const { client } = hangingClient()
  const { store } = await freshTable({ store: { client } })
  const a = invocation(60_000)
  const b = invocation(60_000)
  // A's claims go out together and hang; B's claims, made meanwhile, must not wait for them.
  const hung = Promise.all(['a-1', 'a-2'].map(async (key) => await store.claim(claimOf(key), NOW, a())))
  hung.catch(() => {})
  const claimedB = await within(Promise.all(['b-1', 'b-2'].map(async (key) => await store.claim(claimOf(key), NOW, b()))), 5000,
    "B's claims, while A's grouped request hung,")
  expect(claimedB).toEqual([undefined, undefined])
})

test('a grouped request that never answers is given up when its calls are: the calls answer, and the store goes on', async () => {
  const { client, seen } = hangingClient()
  const { store } = await freshTable({ store: { client } })
  const a = invocation(500)
  const claims = Promise.allSettled(['c-1', 'c-2'].map(async (key) => await store.claim(claimOf(key), NOW, a())))
  const settled = await within(claims, 5000, 'the claims of the hung request, once their signal aborted,')
  expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected'])
  expect(seen.signal?.aborted).toBe(true)
  // The next calls of the store are not held behind the request given up.
  const later = invocation(60_000)
  const next = await within(Promise.all(['c-3', 'c-4'].map(async (key) => await store.claim(claimOf(key), NOW, later()))), 5000,
    'the next calls of the store, after a request given up,')
  expect(next).toEqual([undefined, undefined])
})
