import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { ConfiguredRetryStrategy } from '@smithy/core/retry'
import type middy6 from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { DynamoDBStore, idempotency, type IdempotencyOptions } from '../../src/index.js'
import { storedKey } from '../../src/lifecycle/key.js'
import { sqsPartialBatchFailure } from '../support/middy.js'
import { lambdaContext } from '../support/sqs.js'
import { injectFaults, type FaultCounters, type FaultSettings } from './dynamodb-faults.js'
import type { Invocation } from './invocation.js'
import type { VirtualClock } from './virtual-clock.js'

/** The idempotency namespace of the simulated function (the audit maps payments to stored keys with it). */
export const NAMESPACE = 'payments-consumer'

/** The business logic: charges the ledger, or throws (transient or permanent failure). */
export type Charge = (record: SQSRecord, invocation: Invocation) => void

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
    const { middy, options, clock, tableName, charge } = this.#setup
    const store = new DynamoDBStore({ tableName, client: this.#client })
    // timeoutEarlyInMillis 0: Middy's early timeout is a real-time timer, and Lambda's deadline is virtual here.
    this.#handler = middy<SQSEvent>({ timeoutEarlyInMillis: 0 })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ ...options, store, now: clock.skewed(this.offsetMs) }))
      .handler(async (event) => await this.#work(event, charge)) as never
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
   * The handler: works a while in virtual time, charges each record, answers one settled
   * result per record. On a FIFO queue it stops a group at its first failure, as a FIFO
   * consumer must (the later records of the group are reported failed, not run).
   */
  async #work (event: SQSEvent, charge: Charge): Promise<Array<PromiseSettledResult<unknown>>> {
    const invocation = this.current as Invocation
    const { fate } = invocation
    const { clock } = this.#setup
    if (fate.crash === 'after-claim') await invocation.crash('after-claim')
    if (fate.throwAtEntry) throw new Error('the handler failed before any effect (injected)')
    await invocation.park(clock.now() + fate.workMs)
    const stopped = new Set<string>()
    const results: Array<PromiseSettledResult<unknown>> = []
    for (const [index, record] of event.Records.entries()) {
      const group = record.attributes.MessageGroupId
      if (group !== undefined && stopped.has(group)) {
        results.push({ status: 'rejected', reason: new Error(`held back behind a failure in group ${group}`) })
      } else {
        try {
          charge(record, invocation)
          // From here its completion is due; it waits for the rest of the batch before it is sent.
          invocation.workDone.add(storedKey(NAMESPACE, JSON.parse(record.body).paymentId))
          results.push({ status: 'fulfilled', value: { charged: JSON.parse(record.body).paymentId } })
        } catch (error) {
          if (group !== undefined) stopped.add(group)
          results.push({ status: 'rejected', reason: error })
        }
      }
      if (fate.crash === 'mid-effects' && index + 1 === fate.crashAfterRecords) await invocation.crash('mid-effects')
    }
    if (fate.tailMs > 0) await invocation.park(clock.now() + fate.tailMs)
    if (fate.crash === 'after-effects' || fate.crash === 'mid-effects') await invocation.crash('after-effects')
    return results
  }
}
