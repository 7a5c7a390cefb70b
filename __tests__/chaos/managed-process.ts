import { AsyncLocalStorage } from 'node:async_hooks'
import type middy6 from '@middy/core'
import type { Context } from 'aws-lambda'
import { idempotency, perRecord, type IdempotencyOptions, type RecordTools } from '../../src/index.js'
import type { PerRecordHandler } from '../../src/batch.js'
import type { RecordShape, StoreConnection } from './consumer.js'
import type { Invocation } from './invocation.js'
import { faultyStore, type FaultCounters, type FaultSettings } from './store-faults.js'
import type { VirtualClock } from './virtual-clock.js'

/** What one slot (one concurrent invocation of the process) does with what the shared stack hands it. */
export interface SlotWork<R> {
  batch: (event: unknown, context: Context, options: { signal: AbortSignal }, records: PerRecordHandler<R, unknown>) => Promise<unknown>
  record: (record: R, tools: RecordTools) => Promise<unknown>
}

interface Slot<R> { readonly current?: Invocation, work: SlotWork<R> }

export interface ProcessSetup<R> {
  id: string
  offsetMs: number
  clock: VirtualClock
  connection: StoreConnection
  middy: typeof middy6
  options: Omit<IdempotencyOptions, 'store' | 'now'>
  faults: FaultSettings
  counters: FaultCounters
  shape: RecordShape<R>
}

/**
 * One Lambda Managed Instances process: ONE Middy stack (one `idempotency` middleware, its local
 * cache, one `perRecord` handler, one store client) serving several invocations at once, each in
 * a slot of its own (a `Consumer` the scheduler polls for like any other). Which invocation a
 * hook, a record or a store request belongs to is followed through the async context, as the
 * runtime's own concurrent invocations are: the stack keeps nothing of its own about them.
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-managed-instances.html
 *
 * A slot's crash restarts the stack (a new local cache) for the invocations that come after;
 * the other slots' invocations go on with the stack they started on.
 */
export class ManagedProcess<R> {
  readonly #setup: ProcessSetup<R>
  readonly #slots = new AsyncLocalStorage<Slot<R>>()
  readonly #joined = new WeakSet<object>()
  #handler?: (event: unknown, context: Context) => Promise<unknown>

  constructor (setup: ProcessSetup<R>) {
    this.#setup = setup
  }

  get offsetMs (): number { return this.#setup.offsetMs }

  /** A slot joins (at its start, or again after its invocation died: then the process starts afresh). */
  join (slot: Slot<R>): (event: unknown, context: Context) => Promise<unknown> {
    if (this.#joined.has(slot)) this.#handler = undefined
    this.#joined.add(slot)
    return async (event, context) => {
      const handler = this.#handler ?? this.#coldStart()
      return await this.#slots.run(slot, async () => await handler(event, context))
    }
  }

  #slot (): Slot<R> {
    const slot = this.#slots.getStore()
    if (slot === undefined) throw new Error('chaos: a request of the shared stack outside any invocation')
    return slot
  }

  #coldStart (): (event: unknown, context: Context) => Promise<unknown> {
    const { middy, options, clock, connection, shape, faults, counters, offsetMs } = this.#setup
    const store = faultyStore(connection.store(), () => this.#slots.getStore()?.current, faults, counters)
    const records = perRecord(async (record: R, tools: RecordTools) => await this.#slot().work.record(record, tools))
    // timeoutEarlyInMillis 0: Lambda's deadline is virtual here (see Consumer).
    let stack = middy<any>({ timeoutEarlyInMillis: 0 })
    for (const middleware of shape.outer()) stack = stack.use(middleware)
    const handler = stack
      .use(idempotency({ ...options, store, now: clock.skewed(offsetMs) }))
      .handler(async (event: unknown, context: Context, middyOptions: { signal: AbortSignal }) => await this.#slot().work.batch(event, context, middyOptions, records)) as never as (event: unknown, context: Context) => Promise<unknown>
    this.#handler = handler
    return handler
  }
}

/**
 * The processes of a managed run, by consumer: consumer i is a slot of process
 * `floor(i / invocationsPerProcess)`, which takes that process's first slot's clock and store
 * client. None (an empty list) when each process serves one invocation at a time.
 */
export const sharedProcesses = <R>(
  config: { seed: number, invocationsPerProcess?: number, middy: typeof middy6, rates: { storeFault: number } },
  connections: StoreConnection[],
  offsets: number[],
  common: Pick<ProcessSetup<R>, 'clock' | 'options' | 'counters' | 'shape'>
): Array<ManagedProcess<R> | undefined> => {
  const perProcess = config.invocationsPerProcess ?? 1
  if (perProcess <= 1) return []
  const processes: Array<ManagedProcess<R>> = []
  return connections.map((_connection, i) => {
    const first = i - (i % perProcess)
    processes[first] ??= new ManagedProcess<R>({
      ...common,
      id: `process-${first / perProcess + 1}`,
      offsetMs: offsets[first] as number,
      connection: connections[first] as StoreConnection,
      middy: config.middy,
      faults: { seed: config.seed, rate: config.rates.storeFault }
    })
    return processes[first]
  })
}
