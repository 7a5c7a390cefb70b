import { IdempotencyStoreError, type IdempotencyStore } from '../../src/index.js'
import type {
  ClaimRecord, CommitOutcome, CommitResult, IdempotencyRecord, StoreCallOptions, StoredError
} from '../../src/store.js'
import type { Invocation } from './invocation.js'
import { streamFor } from './prng.js'
import type { VirtualClock } from './virtual-clock.js'

/**
 * The chaos suite's faults, injected at the store boundary: a wrapper of any
 * `IdempotencyStore` (docs/stores.md), so the same suite runs on every store. What a store
 * request can meet:
 * - `refused`: it fails before anything is applied (throttling, a 5xx, a connection refused);
 * - `answer-lost`: it is applied, then its answer never arrives (a timeout after the write);
 * - `slow`: it answers late, after requests sent after it (concurrent requests reorder);
 * - `hang`: it never answers (a blackholed endpoint, a client queueing while disconnected);
 *   it lands before, after the middleware gave it up at the deadline, or never. The
 *   middleware must give it up by the invocation's deadline less `timeoutMarginMs` (its
 *   AbortSignal) and still answer Lambda.
 * The store's own client retries are below this layer: only faults that outlast them are
 * drawn (a fault a retry absorbs is, from here, no fault). Crashes during the completion
 * happen here too, and the bookkeeping the audit reads (who claimed, completed, was fenced).
 */
export type StoreStep = 'claim' | 'complete' | 'fail' | 'release' | 'read'
export type FaultKind = 'refused' | 'answer-lost' | 'slow' | 'hang'
export const FAULT_KINDS: readonly FaultKind[] = ['refused', 'answer-lost', 'slow', 'hang']
/** When the write of a request that hangs lands: before (its answer is what hangs), after it was given up, or never. */
type Landing = 'before' | 'late' | 'never'
const LANDINGS: readonly Landing[] = ['before', 'late', 'never']

export interface FaultCounters {
  /** Faults injected, by `step:kind`. */
  injected: Map<string, number>
  /** Requests that failed as the lifecycle saw them, by step. */
  surfaced: Map<string, number>
}

export const newFaultCounters = (): FaultCounters => ({ injected: new Map(), surfaced: new Map() })

export interface FaultSettings {
  seed: number
  /** Probability that a given (invocation, step, key) meets a fault. */
  rate: number
}

/**
 * What a request that hangs needs of the simulation: the virtual clock, moved on to where the
 * middleware's bound on store calls falls due (the invocation's deadline less `marginMs`), so
 * that the real timer of that bound is due at once instead of the run waiting for it.
 */
export interface HangSettings { clock: VirtualClock, marginMs: number }

const bump = (map: Map<string, number>, key: string): void => { map.set(key, (map.get(key) ?? 0) + 1) }

/** A failure as a store reports one: an `IdempotencyStoreError` keeping the client's error. */
const storeError = (step: StoreStep, key: string, kind: 'refused' | 'answer-lost'): IdempotencyStoreError =>
  new IdempotencyStoreError(step, `${step} of key ${key} failed (${kind}, injected by the chaos suite)`, {
    key,
    cause: Object.assign(new Error(kind === 'refused' ? 'Throughput exceeded (injected)' : 'socket timed out (injected)'), { name: kind === 'refused' ? 'ThrottlingException' : 'TimeoutError' })
  })

/** What the real store is told of a call: the clock skew (a Redis key's life), not the middleware's signal, which the fault wrapper answers itself. */
const skewOf = (options?: StoreCallOptions): StoreCallOptions => options?.clockSkewMs === undefined ? {} : { clockSkewMs: options.clockSkewMs }

/** A few turns of the event loop: enough for requests sent later to answer first. */
const late = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve)) }

/**
 * `store`, with faults for whatever invocation `current()` says is running. A record's
 * acknowledgement is its completion (`complete`, or a `commit`) or its FAILED write (`fail`:
 * a result that cannot be stored ends so, after its effect): both count as settling it.
 */
export const faultyStore = <S extends IdempotencyStore>(store: S, current: () => Invocation | undefined, settings: FaultSettings, counters: FaultCounters, hangs?: HangSettings): IdempotencyStore => {
  const fateOf = (invocation: Invocation, step: StoreStep, key: string): FaultKind | undefined => {
    const plan = streamFor(settings.seed, 'fault', invocation.id, step, key)
    const fault = plan.chance(settings.rate) ? plan.pick(FAULT_KINDS) : undefined
    // A request can only be seen to hang where the middleware gives it up: with a deadline.
    return fault === 'hang' && hangs === undefined ? 'slow' : fault
  }

  /**
   * The request hangs: time runs on to the bound (synchronously, before the middleware measures
   * what is left: nothing else runs meanwhile), and the answer never comes; the middleware's
   * signal ends the wait. No real time is waited: the bound is due at once.
   */
  const hang = async <T>(invocation: Invocation, step: StoreStep, key: string, landing: Landing, apply: (invocation?: Invocation) => Promise<T>, signal: AbortSignal): Promise<T> => {
    if (landing === 'before') {
      const value = await apply(invocation)
      if (step === 'claim' && value === undefined) invocation.claimAnswersLost.add(key)
    }
    const reason = await new Promise<unknown>((resolve) => {
      if (signal.aborted) resolve(signal.reason)
      else signal.addEventListener('abort', () => { resolve(signal.reason) }, { once: true })
    })
    if (landing === 'late') {
      const value = await apply(invocation)
      if (step === 'claim' && value === undefined) invocation.claimAnswersLost.add(key)
    }
    throw reason
  }

  /** One request of `invocation`: its fault, its crash, and what the audit needs to know. */
  const send = async <T>(step: StoreStep, key: string, apply: (invocation?: Invocation) => Promise<T>, classify: (answer: T, invocation: Invocation) => void = () => {}, refusal?: () => T, signal?: AbortSignal): Promise<T> => {
    // The invocation that sends it, kept: another may be current by the time it answers.
    const invocation = current()
    if (invocation === undefined) return await apply()
    const acknowledges = step === 'complete' || step === 'fail'
    if (acknowledges) invocation.completionSent.add(key)
    if (step === 'complete' && invocation.fate.crash === 'completion-before-write') return await invocation.crash('completion-before-write')
    const drawn = fateOf(invocation, step, key)
    // Without a signal, nothing would ever end the wait: such a request is only slow.
    const fault = drawn === 'hang' && signal === undefined ? 'slow' : drawn
    if (fault !== undefined) bump(counters.injected, `${step}:${fault}`)
    if (fault === 'hang' && hangs !== undefined) {
      // Inside the margin already, the bound is half of what is left: time runs on to a
      // millisecond before the deadline, where that half is nothing.
      const bound = invocation.deadline - hangs.marginMs
      hangs.clock.advanceTo(hangs.clock.now() < bound ? bound : invocation.deadline - 1)
      invocation.nudge()
    }
    const landing = streamFor(settings.seed, 'landing', invocation.id, step, key).pick(LANDINGS)
    invocation.commandsInFlight++
    try {
      const answer = await invocation.request(async () => {
        // A store answers a refusal it is sure of (nothing applied) where its contract says so.
        if (fault === 'refused') return refusal === undefined ? await Promise.reject(storeError(step, key, 'refused')) : refusal()
        if (fault === 'hang') return await hang(invocation, step, key, landing, apply, signal as AbortSignal)
        if (fault === 'slow') await late()
        const value = await apply(invocation)
        if (fault === 'answer-lost') {
          if (step === 'claim' && value === undefined) invocation.claimAnswersLost.add(key)
          throw storeError(step, key, 'answer-lost')
        }
        return value
      })
      classify(answer, invocation)
      if (step === 'complete' && invocation.fate.crash === 'completion-after-write') return await invocation.crash('completion-after-write')
      // A crash in the middle of a batch: some records are COMPLETED, the others still in flight.
      if (step === 'complete' && invocation.fate.crash === 'mid-batch' && invocation.completed.size >= invocation.fate.crashAfterRecords) return await invocation.crash('mid-batch')
      return answer
    } catch (error) {
      bump(counters.surfaced, step)
      if (acknowledges) invocation.completionFaults.add(key)
      if (step === 'fail' || step === 'release') invocation.settleFaults.add(key)
      throw error
    } finally {
      invocation.commandsInFlight--
      if (step !== 'claim' && step !== 'read') invocation.settle(key)
    }
  }

  const settled = (key: string, completes: boolean) => (held: boolean, invocation: Invocation): void => {
    if (!held) invocation.fencedOut.add(key)
    else if (completes) invocation.completed.add(key)
  }

  const wrapped: IdempotencyStore = {
    ...(store.limits === undefined ? {} : { limits: store.limits }),
    claim: async (record: ClaimRecord, nowMs: number, options?: StoreCallOptions) => await send('claim', record.key, async (invocation) => {
      const standing: IdempotencyRecord | undefined = await store.claim(record, nowMs, skewOf(options))
      // The write is in the store (even if its answer is lost next): whose token it holds, for the lock audit.
      if (standing === undefined) invocation?.claimed.set(record.key, record.leaseToken)
      return standing
    }, undefined, undefined, options?.signal),
    complete: async (key: string, token: string, outcome: { expiry: number, responseData?: string }, options?: StoreCallOptions) =>
      await send('complete', key, async () => await store.complete(key, token, outcome, skewOf(options)), settled(key, true), undefined, options?.signal),
    fail: async (key: string, token: string, outcome: { expiry: number, error: StoredError }, options?: StoreCallOptions) =>
      await send('fail', key, async () => await store.fail(key, token, outcome, skewOf(options)), settled(key, false), undefined, options?.signal),
    release: async (key: string, token: string, options?: StoreCallOptions) => await send('release', key, async () => await store.release(key, token), settled(key, false), undefined, options?.signal),
    ...(store.read === undefined
      ? {}
      : { read: async (keys: readonly string[], options?: StoreCallOptions) => await send('read', 'batch', async () => await (store.read as NonNullable<IdempotencyStore['read']>).call(store, keys), undefined, undefined, options?.signal) })
  }
  if (store.commit !== undefined) {
    const commit = store.commit.bind(store)
    wrapped.commit = async (key: string, token: string, outcome: CommitOutcome, writes: readonly unknown[], claim?: { nowMs: number }, options?: StoreCallOptions) =>
      await send('complete', key, async () => await commit(key, token, outcome, writes, claim), (result: CommitResult, invocation) => {
        const messageId = (writes[0] as { Put?: { Item?: { messageId?: unknown } } } | undefined)?.Put?.Item?.messageId
        if (result.status === 'committed') invocation.completed.add(key)
        else if (result.status === 'refused') invocation.transactRefused.set(key, { reason: `entry ${result.entry ?? '-'} ${result.code}`, ...(typeof messageId === 'string' ? { messageId } : {}) })
        else invocation.fencedOut.add(key)
      }, () => ({ status: 'refused', code: 'ThrottlingException', message: 'throttled (injected by the chaos suite)', reason: 'temporary' }), options?.signal)
  }
  if (store.checkWrite !== undefined) wrapped.checkWrite = store.checkWrite.bind(store)
  return wrapped
}
