import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { ConfiguredRetryStrategy } from '@smithy/core/retry'
import type middy6 from '@middy/core'
import type { Context, SQSRecord } from 'aws-lambda'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import {
  idempotency, perRecord, type IdempotencyOptions, type IdempotencyStore, type RecordTools
} from '../../src/index.js'
import type { PerRecordHandler } from '../../src/batch.js'
import { DynamoDBStore, transactions, type DynamoDBAwsLiteClient } from '../../src/dynamodb.js'
import { storedKey } from '../../src/keys/selector.js'
import { sqsPartialBatchFailure } from '../support/middy.js'
import { lambdaContext } from '../support/sqs.js'
import { faultyStore, type FaultCounters, type FaultSettings } from './store-faults.js'
import type { Invocation } from './invocation.js'
import type { ManagedProcess } from './managed-process.js'
import type { ChaosConfig } from './scenario.js'
import type { VirtualClock } from './virtual-clock.js'

/** The idempotency namespace of the simulated function (the audit maps payments to stored keys with it). */
export const NAMESPACE = 'payments-consumer'

/**
 * The business logic of one record: charges the ledger, or queues the payment's writes with
 * `transact` (the transact profiles), or throws (transient or permanent failure).
 */
export type Charge<R = SQSRecord> = (record: R, invocation: Invocation, transact: RecordTools['transact']) => Promise<unknown>

/** What differs between an SQS consumer and a stream consumer. */
export interface RecordShape<R> {
  /** The payment a record carries (however it is encoded: an SQS body, Kinesis data). */
  paymentOf: (record: R) => { paymentId: string, amount: number }
  /** The middlewares that go before `idempotency`, outermost first. */
  outer: () => Array<middy6.MiddlewareObj<any, any, any, any>>
  /**
   * How the slow record knows the rest of its batch is done: every other record's settling
   * request answered (`settled`: each record makes one), or no other record running and no
   * request under way (`idle`: for sources and modes where a record may settle without a
   * request — held back unclaimed, failed unclaimed — or may never start).
   */
  neighbours: 'settled' | 'idle'
  /**
   * The event Lambda hands the function for a delivery, and its records in the order the
   * middleware lists them. Default: `{ Records }` (SQS, streams); Kafka's event is its own.
   */
  event?: {
    of: (delivery: { readonly records: readonly R[] }) => unknown
    records: (event: any) => readonly R[]
  }
}

/** The SQS consumer of the README: `@middy/sqs-partial-batch-failure` reads our answer. */
export const sqsShape = (neighbours: RecordShape<SQSRecord>['neighbours'] = 'settled'): RecordShape<SQSRecord> => ({
  paymentOf: (record) => JSON.parse(record.body) as { paymentId: string, amount: number },
  outer: () => [sqsPartialBatchFailure({ logger: false as never })],
  neighbours
})

/**
 * Where one Lambda environment keeps its records: its own client, made once, and a store on it
 * for each cold start (the README's stack builds the store when the module loads).
 */
export interface StoreConnection {
  store: () => IdempotencyStore
  /** Lets the client go, once the run is over. */
  close: () => Promise<void>
}

/**
 * A DynamoDB client of the environment's own, on DynamoDB Local, with the SDK's own retries (below
 * the fault layer). With `CHAOS_DYNAMODB_CLIENT=aws-lite`, an `@aws-lite/client` instead, with as
 * many attempts: the same store logic over the other wire (docs/stores.md: a client without the SDK).
 */
export const dynamoDBConnection = (endpoint: string, tableName: string, sdkMaxAttempts: number): StoreConnection => {
  if (process.env.CHAOS_DYNAMODB_CLIENT === 'aws-lite') {
    const lite = import('@aws-lite/client').then(async ({ default: awsLite }) => await awsLite({
      region: 'us-east-1', accessKeyId: 'local', secretAccessKey: 'local', endpoint, retries: sdkMaxAttempts - 1
    }))
    // Made once the first request needs it, with the shape of an aws-lite client (a function with its config).
    const client = Object.assign(async (request: Parameters<DynamoDBAwsLiteClient>[0]): Promise<unknown> => await (await lite)(request as never),
      { config: {} })
    return {
      store: () => new DynamoDBStore({ tableName, client, transactions }),
      close: async () => {}
    }
  }
  const client = new DynamoDBClient({
    ...localClientConfig(endpoint),
    // The SDK's own retries, minus the real-time backoff (virtual time does not wait).
    retryStrategy: new ConfiguredRetryStrategy(sdkMaxAttempts, 0)
  })
  return {
    // With `transactions`: the orders effect commits its writes with transact.
    store: () => new DynamoDBStore({ tableName, client, transactions }),
    close: async () => { client.destroy() }
  }
}

export interface ConsumerSetup<R> {
  id: string
  /** This host's clock skew. */
  offsetMs: number
  clock: VirtualClock
  /** Its store's client (DynamoDB, Redis): faults are injected on top of the store made from it. */
  connection: StoreConnection
  middy: typeof middy6
  options: Omit<IdempotencyOptions, 'store' | 'now'>
  faults: FaultSettings
  counters: FaultCounters
  charge: Charge<R>
  shape: RecordShape<R>
  /** `promises`: the handler returns `event.Records.map(async …)` (no `Promise.allSettled`). */
  handler?: 'perRecord' | 'promises'
  /** The managed profile: this environment is one slot of a process whose one stack serves several invocations at once. */
  process?: ManagedProcess<R>
}

/**
 * One Lambda execution environment: its own store client (with fault injection), its own
 * skewed clock, and the README's Middy stack, rebuilt on a cold start after a crash (a warm
 * container's local cache does not survive its process).
 */
export class Consumer<R = SQSRecord> {
  readonly id: string
  readonly offsetMs: number
  current?: Invocation
  readonly #setup: ConsumerSetup<R>
  #handler!: (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>
  /** The records handed to the function by the current invocation (the ones it claimed). */
  #running: readonly R[] = []
  /** Record functions of the current invocation still working. */
  #busy = 0
  /** This environment as a slot of its shared process (the managed profile). */
  #slot?: Parameters<ManagedProcess<R>['join']>[0]

  constructor (setup: ConsumerSetup<R>) {
    this.id = setup.id
    this.offsetMs = setup.offsetMs
    this.#setup = setup
    this.coldStart()
  }

  coldStart (): void {
    const { middy, options, clock, connection, shape, process } = this.#setup
    if (process !== undefined) {
      const current = (): Invocation | undefined => this.current
      this.#slot ??= { get current () { return current() }, work: { batch: async (...args) => await this.#batch(...args), record: async (record, tools) => await this.#record(record, tools) } }
      this.#handler = process.join(this.#slot)
      return
    }
    const store = faultyStore(connection.store(), () => this.current, this.#setup.faults, this.#setup.counters, { clock, marginMs: options.timeoutMarginMs ?? 1000 })
    const records = perRecord(async (record: R, tools: RecordTools) => await this.#record(record, tools))
    // timeoutEarlyInMillis 0: Middy's early timeout is a real-time timer, and Lambda's deadline is
    // virtual here: the simulator kills an invocation past its deadline instead.
    let stack = middy<any>({ timeoutEarlyInMillis: 0 })
    for (const middleware of shape.outer()) stack = stack.use(middleware)
    this.#handler = stack
      .use(idempotency({
        ...options,
        store,
        now: clock.skewed(this.offsetMs),
        // What the audit needs to tell a lease kept at the deadline from one left behind.
        onOutcome: (outcome) => {
          if (outcome.kind === 'timed-out' && outcome.key !== undefined) this.current?.timedOut.add(outcome.key)
          options.onOutcome?.(outcome)
        }
      }))
      .handler(async (event: unknown, context: Context, middyOptions: { signal: AbortSignal }) => await this.#batch(event, context, middyOptions, records)) as never
  }

  /** Hands a delivered batch to the function; the scheduler then drives `invocation`. */
  start (invocation: Invocation<{ records: readonly R[], receivedAt: number }>): void {
    this.current = invocation
    this.#busy = 0
    const { clock } = this.#setup
    const context = lambdaContext(() => invocation.deadline - clock.now(), 'payments-consumer')
    const { delivery } = invocation
    const event = this.#setup.shape.event?.of(delivery) ?? { Records: delivery.records }
    // A copy: a middleware before ours (event-normalizer) rewrites the records in place.
    invocation.start(async () => await this.#handler(structuredClone(event), context))
  }

  finish (): void {
    this.current = undefined
  }

  async close (): Promise<void> {
    await this.#setup.connection.close()
  }

  #keyOf (record: R): string {
    return storedKey(NAMESPACE, this.#setup.shape.paymentOf(record).paymentId)
  }

  /**
   * The handler: works a while in virtual time, then hands the records to `perRecord`, which
   * settles each one when its own work ends (and, in an ordered source, stops a group at its
   * first failure). The fate's crashes strike before the batch, after it, or — from the fault
   * layer — once some records are COMPLETED and the others are still in flight.
   */
  async #batch (event: unknown, context: Context, options: { signal: AbortSignal }, records: PerRecordHandler<R, unknown>): Promise<unknown> {
    const invocation = this.current as Invocation
    const { fate } = invocation
    const { clock } = this.#setup
    if (fate.crash === 'after-claim') await invocation.crash('after-claim')
    if (fate.throwAtEntry) throw new Error('the handler failed before any effect (injected)')
    await invocation.park(clock.now() + fate.workMs, 'timeout-before-effects')
    this.#running = this.#setup.shape.event?.records(event) ?? (event as { Records: R[] }).Records
    let results: unknown
    if (this.#setup.handler === 'promises') {
      const promises = this.#running.map(async (record) => await this.#record(record, { transact: noTransact } as unknown as RecordTools))
      // The middleware awaits them; should this process die first (a simulated crash), their
      // rejections must not end the real test process as unhandled.
      for (const promise of promises) promise.catch(() => {})
      results = promises
    } else {
      results = await records(event as never, context, options)
    }
    if (fate.crash === 'after-effects' || fate.crash === 'mid-batch') await invocation.crash('after-effects')
    return results
  }

  /**
   * One record. The batch's last record is the slow one when the fate says so: it waits until
   * the rest of the batch is done (so nothing else is under way while virtual time moves),
   * then works past its neighbours, maybe past the deadline: a timeout in the middle of a batch.
   */
  async #record (record: R, { transact }: RecordTools): Promise<unknown> {
    const invocation = this.current as Invocation
    const { fate } = invocation
    const { clock, charge, shape } = this.#setup
    const slow = fate.slowRecordMs > 0 && record === this.#running[this.#running.length - 1]
    let result: unknown = { charged: shape.paymentOf(record).paymentId }
    this.#busy++
    try {
      if (slow) {
        // Inside the margin (a request that hung moved time on), a neighbour that fails keeps its
        // lease without a request: there is no settlement to wait for, only quiet.
        const margin = this.#setup.options.timeoutMarginMs ?? 1000
        const nearDeadline = (): boolean => invocation.deadline - clock.now() <= margin
        if (shape.neighbours === 'settled') await invocation.allSettled(this.#running.filter((r) => r !== record).map((r) => this.#keyOf(r)), nearDeadline)
        if (shape.neighbours !== 'settled' || nearDeadline()) await this.#idle(invocation)
        await invocation.park(clock.now() + fate.slowRecordMs, 'timeout-mid-batch')
      }
      const receipt = await charge(record, invocation, transact)
      if (receipt !== undefined) result = receipt
      if (slow && fate.tailMs > 0) await invocation.park(clock.now() + fate.tailMs, 'timeout-after-effects')
    } finally {
      this.#busy--
    }
    // Its work has ended: from here its completion is due, and perRecord sends it at once. In a
    // process already dead (a crash while its request was out), it ended with the process.
    if (!invocation.dead) invocation.workDone.add(this.#keyOf(record))
    return result
  }

  /**
   * Until no other record function runs and no request of this invocation is under way. Checked
   * after a turn of the event loop: a record's settlement starts within microtasks of its
   * function's end, and the next record of its lane within microtasks of that settlement.
   */
  async #idle (invocation: Invocation): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      // A process that died meanwhile goes no further (and stops polling: nothing of it ever answers again).
      if (invocation.dead) await new Promise<never>(() => {})
      if (this.#busy <= 1 && invocation.commandsInFlight === 0) return
      await new Promise<void>((resolve) => setTimeout(resolve, 1))
    }
  }
}

const noTransact = (): never => { throw new Error('the promises profile has ledger effects only') }

/** The middleware's options every chaos consumer runs with; `key` says where the payment id is. */
export const idempotencyOptions = (config: ChaosConfig, extra: Pick<IdempotencyOptions, 'key'>): Omit<IdempotencyOptions, 'store' | 'now'> => ({
  ...extra,
  namespace: NAMESPACE,
  // Longer than any run: expiry is not what this suite is about.
  expiresAfterSeconds: 7 * 24 * 3600,
  onFailure: (_error, { attempt }) => attempt >= config.failFromAttempt ? 'fail' : 'delete',
  localCacheSize: config.localCacheSize,
  // Two consumers' clocks are up to 2 × maxSkewMs apart: that is the allowance a lease needs.
  clockSkewMs: 2 * config.maxSkewMs,
  logger: false,
  // The commit claims: records are not claimed before they run (issue 10).
  ...(config.effects === 'transact-only' ? { effects: 'transact-only' as const } : {})
})
