import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { ConfiguredRetryStrategy } from '@smithy/core/retry'
import type middy6 from '@middy/core'
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { DynamoDBStore, idempotency, perRecord, type IdempotencyOptions, type PerRecordHandler, type RecordTools } from '../../src/index.js'
import { storedKey } from '../../src/lifecycle/key.js'
import { sqsPartialBatchFailure } from '../support/middy.js'
import { lambdaContext } from '../support/sqs.js'
import { injectFaults, type FaultCounters, type FaultSettings } from './dynamodb-faults.js'
import type { Invocation } from './invocation.js'
import type { VirtualClock } from './virtual-clock.js'

/** The idempotency namespace of the simulated function (the audit maps payments to stored keys with it). */
export const NAMESPACE = 'payments-consumer'

/**
 * The business logic of one record: charges the ledger, or queues the payment's writes with
 * `transact` (the transact profile), or throws (transient or permanent failure).
 */
export type Charge = (record: SQSRecord, invocation: Invocation, transact: RecordTools['transact']) => Promise<void>

const keyOf = (record: SQSRecord): string => storedKey(NAMESPACE, (JSON.parse(record.body) as { paymentId: string }).paymentId)

export interface ConsumerSetup {
  id: string
  /** This host's clock skew. */
  offsetMs: number
  clock: VirtualClock
  endpoint: string
  tableName: string
  middy: typeof middy6
  options: Omit<IdempotencyOptions, 'store' | 'now'>
  faults: FaultSettings
  counters: FaultCounters
  charge: Charge
}

/**
 * One Lambda execution environment polling the queue: its own DynamoDB client (with fault
 * injection), its own skewed clock, and the README's Middy stack, rebuilt on a cold start
 * after a crash (a warm container's local cache does not survive its process).
 */
export class Consumer {
  readonly id: string
  readonly offsetMs: number
  current?: Invocation
  readonly #setup: ConsumerSetup
  readonly #client: DynamoDBClient
  #handler!: (event: SQSEvent, context: ReturnType<typeof lambdaContext>) => Promise<unknown>
  /** The records handed to the function by the current invocation (the ones it claimed). */
  #running: SQSRecord[] = []

  constructor (setup: ConsumerSetup) {
    this.id = setup.id
    this.offsetMs = setup.offsetMs
    this.#setup = setup
    this.#client = new DynamoDBClient({
      ...localClientConfig(setup.endpoint),
      // The SDK's own retries, minus the real-time backoff (virtual time does not wait).
      retryStrategy: new ConfiguredRetryStrategy(setup.faults.maxAttempts, 0)
    })
    injectFaults(this.#client, () => this.current, setup.faults, setup.counters)
    this.coldStart()
  }

  coldStart (): void {
    const { middy, options, clock, tableName } = this.#setup
    const store = new DynamoDBStore({ tableName, client: this.#client })
    const records = perRecord(async (record: SQSRecord, tools: RecordTools) => await this.#record(record, tools))
    // timeoutEarlyInMillis 0: Middy's early timeout is a real-time timer, and Lambda's deadline is
    // virtual here: the simulator kills an invocation past its deadline instead.
    this.#handler = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ ...options, store, now: clock.skewed(this.offsetMs) }))
      .handler(async (event: SQSEvent, context: Context, middyOptions: { signal: AbortSignal }) => await this.#batch(event, context, middyOptions, records)) as never
  }

  /** Hands a delivered batch to the function; the scheduler then drives `invocation`. */
  start (invocation: Invocation): void {
    this.current = invocation
    const { clock } = this.#setup
    const context = lambdaContext(() => invocation.deadline - clock.now(), 'payments-consumer')
    invocation.start(async () => await this.#handler({ Records: invocation.delivery.records }, context))
  }

  finish (): void {
    this.current = undefined
  }

  destroy (): void {
    this.#client.destroy()
  }

  /**
   * The handler: works a while in virtual time, then hands the records to `perRecord`, which
   * settles each one when its own work ends (and, on a FIFO queue, stops a group at its first
   * failure). The fate's crashes strike before the batch, after it, or — from the fault layer —
   * once some records are COMPLETED and the others are still in flight.
   */
  async #batch (event: SQSEvent, context: Context, options: { signal: AbortSignal }, records: PerRecordHandler<SQSRecord, unknown>): Promise<unknown> {
    const invocation = this.current as Invocation
    const { fate } = invocation
    const { clock } = this.#setup
    if (fate.crash === 'after-claim') await invocation.crash('after-claim')
    if (fate.throwAtEntry) throw new Error('the handler failed before any effect (injected)')
    await invocation.park(clock.now() + fate.workMs, 'timeout-before-effects')
    this.#running = event.Records
    const results = await records(event, context, options)
    if (fate.crash === 'after-effects' || fate.crash === 'mid-batch') await invocation.crash('after-effects')
    return results
  }

  /**
   * One record. The batch's last record is the slow one when the fate says so: it waits until
   * every other record has settled (so nothing else is under way while virtual time moves),
   * then works past its neighbours, maybe past the deadline: a timeout in the middle of a batch.
   */
  async #record (record: SQSRecord, { transact }: RecordTools): Promise<unknown> {
    const invocation = this.current as Invocation
    const { fate } = invocation
    const { clock, charge } = this.#setup
    const slow = fate.slowRecordMs > 0 && record === this.#running[this.#running.length - 1]
    if (slow) {
      await invocation.allSettled(this.#running.filter((r) => r !== record).map(keyOf))
      await invocation.park(clock.now() + fate.slowRecordMs, 'timeout-mid-batch')
    }
    await charge(record, invocation, transact)
    if (slow && fate.tailMs > 0) await invocation.park(clock.now() + fate.tailMs, 'timeout-after-effects')
    // Its work has ended: from here its completion is due, and perRecord sends it at once.
    invocation.workDone.add(keyOf(record))
    return { charged: (JSON.parse(record.body) as { paymentId: string }).paymentId }
  }
}
