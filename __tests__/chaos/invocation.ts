/** What Lambda hands one invocation: an SQS delivery, a shard's batch. */
export interface Batch { readonly records: readonly unknown[], readonly receivedAt: number }

/** Where an invocation died. A crash is the end: no `after`, no `onError`, no response. */
export type CrashPhase =
  | 'after-claim' // in the handler, before any effect
  | 'mid-batch' // some records settled (COMPLETED), the others running or settling
  | 'after-effects' // every record settled, the handler has not returned
  | 'completion-before-write' // the completion request was never sent
  | 'completion-after-write' // the completion reached the table, then the process died
  | 'timeout-before-effects' // Lambda killed a slow handler at its deadline, before any record ran
  | 'timeout-mid-batch' // killed while one slow record worked, the others already settled
  | 'timeout-after-effects' // killed while the slow record worked on after its effect

/** What the scheduler learns when it lets an invocation run. */
export type Signal =
  | { kind: 'parked', wakeAt: number, killedAs: CrashPhase }
  | { kind: 'settled', response?: unknown, error?: unknown }
  | { kind: 'crashed', phase: CrashPhase }

/** What misfortune this invocation meets, decided up front from the seed. */
export interface InvocationFate {
  crash?: CrashPhase
  /** For 'mid-batch': after how many records were acknowledged COMPLETED. */
  crashAfterRecords: number
  throwAtEntry: boolean
  lostAck: boolean
  /** Virtual time the handler works before the batch starts (may pass the deadline: then Lambda kills it). */
  workMs: number
  /**
   * Virtual time the batch's last record works once every other record has settled, before
   * its effect (may pass the deadline: Lambda then kills it mid-batch); 0 when it is not slow.
   */
  slowRecordMs: number
  /** Virtual time that slow record works after its effect, before returning. */
  tailMs: number
}

const never = new Promise<never>(() => {})

/**
 * One Lambda invocation, driven step by step by the scheduler: it runs until it parks
 * (a handler working in virtual time), settles, or crashes. Only one invocation runs at a
 * time, so a seed replays the same interleaving of DynamoDB writes.
 *
 * A crash abandons the invocation: its handler and its in-flight SDK calls never settle,
 * so Middy runs neither `after` nor `onError` and no response reaches the queue.
 */
export class Invocation<D extends Batch = Batch> {
  readonly id: string
  readonly consumerId: string
  readonly delivery: D
  readonly startedAt: number
  /** True time at which Lambda kills it. */
  readonly deadline: number
  readonly fate: InvocationFate
  dead = false
  crashPhase?: CrashPhase
  /** Stored keys this invocation claimed, with their lease token (for the lock audit). */
  readonly claimed = new Map<string, string>()
  /** Stored keys whose record's work had ended with a result (the effect was applied): its completion was due. */
  readonly workDone = new Set<string>()
  /** Stored keys whose completion request had left the handler (sent, or about to be), acknowledged or not. */
  readonly completionSent = new Set<string>()
  /** Stored keys whose completion the store acknowledged. */
  readonly completed = new Set<string>()
  /** Stored keys whose completion failed after the SDK's retries (the physical limit). */
  readonly completionFaults = new Set<string>()
  /** Stored keys whose completion was refused by the fence: somebody took the lease over. */
  readonly fencedOut = new Set<string>()
  /** Stored keys whose release or failure write failed (the lease then lapses on its own). */
  readonly settleFaults = new Set<string>()
  /** Stored keys whose claim answer was lost after the write reached the table. */
  readonly claimAnswersLost = new Set<string>()
  /** Stored keys whose commit one of the user's `transact` conditions refused: which entry and code, and the message's id. */
  readonly transactRefused = new Map<string, { reason: string, messageId?: string }>()
  /** Stored keys whose settling request (complete, commit, fail, release) has answered, whatever the answer. */
  readonly settled = new Set<string>()
  /**
   * Stored keys whose work failed at or near the deadline (within `timeoutMarginMs`: after a
   * request that hung, or a handler that woke late): their leases are kept by design.
   */
  readonly timedOut = new Set<string>()

  /**
   * SDK commands of this invocation between `client.send` and their answer (counted before the
   * SDK's retries and signing, unlike `request`): a settlement that has just started shows here.
   */
  commandsInFlight = 0

  #signals: Signal[] = []
  #waiter?: (signal: Signal) => void
  #resume?: () => void
  #inflight = 0
  #idle: Array<() => void> = []
  #settleWatchers: Array<() => void> = []

  constructor (init: { id: string, consumerId: string, delivery: D, startedAt: number, deadline: number, fate: InvocationFate }) {
    this.id = init.id
    this.consumerId = init.consumerId
    this.delivery = init.delivery
    this.startedAt = init.startedAt
    this.deadline = init.deadline
    this.fate = init.fate
  }

  /** Starts the invocation; `run` is the whole Middy handler call. */
  start (run: () => Promise<unknown>): void {
    run().then(
      (response) => { if (!this.dead) this.#emit({ kind: 'settled', response }) },
      (error: unknown) => { if (!this.dead) this.#emit({ kind: 'settled', error }) }
    )
  }

  /** The next thing that happens to this invocation. */
  async next (): Promise<Signal> {
    const queued = this.#signals.shift()
    if (queued !== undefined) return queued
    return await new Promise<Signal>((resolve) => { this.#waiter = resolve })
  }

  /**
   * Called by the handler: hand control back to the scheduler until virtual time `wakeAt`.
   * Only one piece of the handler may park at a time, and nothing else of it may be under way:
   * the scheduler moves virtual time on while it is parked. `killedAs` names the phase if
   * Lambda's deadline comes first.
   */
  async park (wakeAt: number, killedAs: CrashPhase): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#resume = resolve
      this.#emit({ kind: 'parked', wakeAt, killedAs })
    })
  }

  /** Called by the fault layer when a record's settling request answered. */
  settle (key: string): void {
    this.settled.add(key)
    for (const watcher of this.#settleWatchers.splice(0)) watcher()
  }

  /** Resolves once every key of `keys` has settled: then nothing else of the batch is under way. */
  async allSettled (keys: readonly string[], orWhen: () => boolean = () => false): Promise<void> {
    while (!keys.every((key) => this.settled.has(key)) && !orWhen()) {
      await new Promise<void>((resolve) => { this.#settleWatchers.push(resolve) })
    }
  }

  /** Whoever waits in `allSettled` looks again: virtual time moved on (a request that hung). */
  nudge (): void {
    for (const watcher of this.#settleWatchers.splice(0)) watcher()
  }

  /** Called by the scheduler when the clock reaches the wake time. */
  resume (): void {
    const resume = this.#resume
    this.#resume = undefined
    resume?.()
  }

  /** The process dies here: this promise never settles, and the scheduler is told. */
  async crash (phase: CrashPhase): Promise<never> {
    if (!this.dead) {
      this.dead = true
      this.crashPhase = phase
      this.#emit({ kind: 'crashed', phase })
    }
    return await never
  }

  /** Lambda kills a parked invocation at its deadline. */
  kill (phase: CrashPhase): void {
    this.dead = true
    this.crashPhase = phase
  }

  /**
   * Runs one SDK request of this invocation. Once dead, nothing new is sent and no
   * answer is delivered, like a process that no longer exists.
   */
  async request<T> (send: () => Promise<T>): Promise<T> {
    if (this.dead) return await never
    this.#inflight++
    let outcome: { ok: true, value: T } | { ok: false, error: unknown }
    try {
      outcome = { ok: true, value: await send() }
    } catch (error) {
      outcome = { ok: false, error }
    } finally {
      if (--this.#inflight === 0) for (const done of this.#idle.splice(0)) done()
    }
    if (this.dead) return await never
    if (outcome.ok) return outcome.value
    throw outcome.error
  }

  /** Resolves once no request of this invocation is in flight (after a crash: the ones already sent have landed). */
  async quiescent (): Promise<void> {
    if (this.#inflight === 0) return
    await new Promise<void>((resolve) => { this.#idle.push(resolve) })
  }

  #emit (signal: Signal): void {
    const waiter = this.#waiter
    if (waiter !== undefined) {
      this.#waiter = undefined
      waiter(signal)
    } else {
      this.#signals.push(signal)
    }
  }
}
