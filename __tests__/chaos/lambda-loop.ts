import type { Consumer } from './consumer.js'
import { fateOf, type Rates } from './fates.js'
import { Invocation, type Batch, type CrashPhase, type Signal } from './invocation.js'
import { streamFor } from './prng.js'
import type { VirtualClock } from './virtual-clock.js'

/**
 * What an event source (the SQS queue, a Kinesis stream) does in a chaos run; the rest of
 * Lambda's polling loop is the same for both and lives in {@link runLambdaLoop}.
 */
export interface SimulatedSource<D extends Batch> {
  /** Sends or puts what the producer has due by `now`; returns when the next is due (Infinity: none left). */
  produce: (now: number) => number
  /** The next batch for an idle consumer, if one is ready. */
  receive: (now: number) => D | undefined
  /** When a batch will next be ready (a visibility timeout ends, a shard's retry backoff). */
  nextReadyAt: (now: number) => number | undefined
  /** Nothing left to deliver. */
  drained: () => boolean
  /** The function answered (`answered`), or Lambda never got its answer (a function error, a lost acknowledgement). */
  settled: (delivery: D, answered: { response?: unknown } | undefined, now: number) => void
  /** The process died (a crash, or Lambda killing it at its deadline). */
  died: (delivery: D, now: number) => void
}

export interface LoopStats {
  invocations: number
  deliveries: number
  lostAcks: number
  handlerThrows: number
  crashes: Map<CrashPhase, number>
  virtualMs: number
  stuck: boolean
}

/**
 * Faults of the run as a whole, at set virtual times (a store server's crash and restart). The
 * scheduler runs them between events, when nothing of any invocation is under way.
 */
export interface ScheduledFaults {
  /** When the next one is due (Infinity: none left). */
  nextAt: () => number
  /** Runs every one due by `now`. */
  runDue: (now: number) => Promise<void>
  /** The run is over: undo what is still in force (a server still down comes back), run nothing more. */
  finish: (now: number) => Promise<void>
}

interface Parked<R> { consumer: Consumer<R>, wakeAt: number, killedAs: CrashPhase }

/**
 * Lambda's side of a chaos run, on the virtual clock: the producer's messages arrive, idle
 * consumers take batches, parked handlers wake (or are killed at their deadline), and time
 * jumps to the next event until the source drains. Ends past every lease, so that leftover
 * locks are judged once no owner can still hold them. Returns every invocation.
 */
export const runLambdaLoop = async <R, D extends Batch & { readonly records: readonly R[] }>(run: {
  seed: number
  rates: Rates
  functionTimeoutMs: number
  maxSkewMs: number
  maxVirtualMs: number
  clock: VirtualClock
  consumers: Array<Consumer<R>>
  stats: LoopStats
  source: SimulatedSource<D>
  scheduled?: ScheduledFaults
}): Promise<Map<string, Invocation<D>>> => {
  const { seed, rates, clock, consumers, stats, source, scheduled } = run
  const startedAt = clock.now()
  const invocations = new Map<string, Invocation<D>>()
  const parked = new Map<Invocation<D>, Parked<R>>()

  const died = (consumer: Consumer<R>, invocation: Invocation<D>, phase: CrashPhase): void => {
    stats.crashes.set(phase, (stats.crashes.get(phase) ?? 0) + 1)
    source.died(invocation.delivery, clock.now())
    consumer.finish()
    consumer.coldStart()
  }

  /** What the scheduler does with the signal an invocation gave when it stopped running. */
  const handle = async (consumer: Consumer<R>, invocation: Invocation<D>, signal: Signal): Promise<void> => {
    switch (signal.kind) {
      case 'parked':
        // A request it gave up (one that hung) may land after it moved on: it lands before anything
        // else happens (a server restart snapshots the records between two events).
        await invocation.quiescent()
        parked.set(invocation, { consumer, wakeAt: signal.wakeAt, killedAs: signal.killedAs })
        return
      case 'settled': {
        await invocation.quiescent()
        consumer.finish()
        const lost = invocation.fate.lostAck
        if (lost) stats.lostAcks++
        source.settled(invocation.delivery, lost || signal.error !== undefined ? undefined : { response: signal.response }, clock.now())
        return
      }
      case 'crashed':
        await invocation.quiescent()
        died(consumer, invocation, signal.phase)
    }
  }

  for (;;) {
    const now = clock.now()
    const nextProduction = source.produce(now)
    await scheduled?.runDue(now)

    // Parked handlers whose time has come wake up; those past their deadline are killed by Lambda.
    const due = [...parked].filter(([inv, p]) => Math.min(p.wakeAt, inv.deadline) <= now)
      .sort(([a, p], [b, q]) => p.wakeAt - q.wakeAt || a.id.localeCompare(b.id))
    for (const [invocation, p] of due) {
      parked.delete(invocation)
      // A store request that hung moves time on while the invocation that sent it runs
      // (store-faults.ts): a handler it carried past its deadline does not wake.
      if (p.wakeAt > invocation.deadline || clock.now() >= invocation.deadline) {
        invocation.kill(p.killedAs)
        died(p.consumer, invocation, p.killedAs)
        continue
      }
      invocation.resume()
      await handle(p.consumer, invocation, await invocation.next())
    }

    // Idle consumers poll until the source has nothing ready for them.
    const pollOrder = streamFor(seed, 'poll', now)
    for (let polled = true; polled;) {
      polled = false
      for (const consumer of pollOrder.shuffle(consumers)) {
        if (consumer.current !== undefined) continue
        // Read again: an invocation started just before may have moved time on (a hung request).
        const at = clock.now()
        const delivery = source.receive(at)
        if (delivery === undefined) continue
        polled = true
        stats.deliveries += delivery.records.length
        const id = `inv-${++stats.invocations}`
        const invocation = new Invocation<D>({
          id,
          consumerId: consumer.id,
          delivery,
          startedAt: at,
          deadline: at + run.functionTimeoutMs,
          fate: fateOf(seed, id, delivery.records.length, rates, run.functionTimeoutMs)
        })
        if (invocation.fate.throwAtEntry && invocation.fate.crash === undefined) stats.handlerThrows++
        invocations.set(id, invocation)
        consumer.start(invocation as never)
        await handle(consumer, invocation, await invocation.next())
      }
    }

    if (!Number.isFinite(nextProduction) && source.drained() && parked.size === 0) break
    const next = Math.min(
      nextProduction,
      source.nextReadyAt(now) ?? Infinity,
      scheduled?.nextAt() ?? Infinity,
      ...[...parked].map(([inv, p]) => Math.min(p.wakeAt, inv.deadline))
    )
    if (!Number.isFinite(next) || next - startedAt > run.maxVirtualMs) {
      stats.stuck = true
      break
    }
    clock.advanceTo(next)
  }
  stats.virtualMs = clock.now() - startedAt
  await scheduled?.finish(clock.now())

  // Past every lease (a lease ends at its owner's deadline, in its owner's skewed clock).
  const lastDeadline = Math.max(clock.now(), ...[...invocations.values()].map((i) => i.deadline))
  clock.advanceTo(lastDeadline + 2 * run.maxSkewMs + 1000)
  return invocations
}
