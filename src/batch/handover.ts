import { fieldOf, shapeOf } from '../sources/source.js'
import type { Batch } from './batch.js'

/**
 * The live batches of an invocation, on its Lambda context: `perRecord` receives the context
 * whatever a middleware inside ours made of the event. A symbol, not enumerable, so that a
 * logged or serialised context does not show it; `Symbol.for`, so that two copies of this
 * package in one bundle (two versions, or one imported and one required) find each other's batches.
 */
const BATCHES = Symbol.for('middy-idempotency.batches')

type WithBatches = Record<typeof BATCHES, Set<Batch> | undefined>

/**
 * Gives the handler only the records it must run, under a field that notes being read (so a
 * failure before anything read them is known not to have run them), and puts the batch on the
 * context where `perRecord` finds it.
 */
export const handOver = (event: object, batch: Batch): object => {
  let records = shapeOf(batch.source, batch.run.map((s) => s.record))
  const handed = { ...event }
  Object.defineProperty(handed, fieldOf(batch.source), {
    get: () => { batch.recordsWereRead(); return records },
    set: (value: unknown) => { batch.recordsWereRead(); records = value },
    enumerable: true,
    configurable: true
  })
  batch.handedAs(handed)
  const { context } = batch
  if (typeof context === 'object' && context !== null) {
    const owner = context as WithBatches
    if (owner[BATCHES] === undefined) {
      Object.defineProperty(owner, BATCHES, { value: new Set<Batch>(), enumerable: false, configurable: true })
    }
    owner[BATCHES]?.add(batch)
  }
  return handed
}

/** Takes an answered batch off its context. */
export const takeBack = (batch: Batch): void => {
  const { context } = batch
  if (typeof context === 'object' && context !== null) (context as WithBatches)[BATCHES]?.delete(batch)
}

/**
 * The batch `perRecord` was called for: the one whose handed event it was given or, should a
 * middleware inside ours have replaced the event, the context's only live batch. A context
 * shared by two live batches (tests reusing one) is found by event only.
 */
export const batchFor = (event: unknown, context: unknown): Batch | undefined => {
  if (typeof context !== 'object' || context === null) return undefined
  const live = (context as WithBatches)[BATCHES]
  if (live === undefined || live.size === 0) return undefined
  for (const batch of live) if (batch.handed === event) return batch
  return live.size === 1 ? live.values().next().value : undefined
}
