import { IdempotencyConfigError } from '../errors.js'
import { fieldOf, identifierText, type BatchSource } from '../sources/source.js'
import type { ClaimedRecord, RecordState } from './record-state.js'

/**
 * Which record each part of a hand-written handler's answer is about (docs/batches.md:
 * hand-written handlers). A record is completed only on the strength of an answer that names
 * it: whatever cannot be attributed makes the whole answer unreadable.
 */

/**
 * The claimed records in the order of `left`, the records as the handler left them: its
 * `Promise.allSettled` array is aligned with those, as `@middy/sqs-partial-batch-failure` reads
 * it. A handler may sort them in place or put a sorted copy there (see `matchEach`). Anything
 * else (a record twice, one missing, one that names none) throws.
 */
export const attribute = (
  run: readonly ClaimedRecord[], left: readonly unknown[], source: BatchSource
): readonly ClaimedRecord[] => {
  if (left.length !== run.length) throw notGiven(source, `${left.length} records for ${run.length}`)
  const matched = matchEach(run, left, source)
  return matched.map((state, i) => {
    if (typeof state === 'string') throw notGiven(source, `entry ${i} ${state}`)
    return state
  })
}

/**
 * Which claimed record of `run` each of `given` stands for: the record object itself or, failing
 * that, a copy carrying the identifier of exactly one of them (a normalised copy). Each claimed
 * record is matched once. An entry that stands for none gets why, as text, instead: `perRecord`
 * fails that entry alone, a hand-written answer is unreadable.
 */
export const matchEach = (
  run: readonly ClaimedRecord[], given: readonly unknown[], source: BatchSource
): Array<ClaimedRecord | string> => {
  const byRecord = new Map<unknown, ClaimedRecord>()
  // null: two records it was given share the identifier, which then names neither.
  const byId = new Map<string, ClaimedRecord | null>()
  for (const state of run) {
    byRecord.set(state.record, state)
    byId.set(state.id, byId.has(state.id) ? null : state)
  }
  const taken = new Set<ClaimedRecord>()
  // The record objects first, so that a copy met earlier cannot take the place of the record itself.
  const matched: Array<ClaimedRecord | string | undefined> = given.map((record) => {
    const state = byRecord.get(record)
    if (state === undefined || taken.has(state)) return undefined
    taken.add(state)
    return state
  })
  return matched.map((state, i) => {
    if (state !== undefined) return state
    const record = given[i]
    const id = typeof record === 'object' && record !== null ? source.itemIdentifier(record) : undefined
    if (id === undefined) return 'has no identifier'
    const byIdentifier = byId.get(id)
    if (byIdentifier === undefined) return `(${id}) is none of them`
    if (byIdentifier === null) return `(${id}) is the identifier of two of them`
    if (taken.has(byIdentifier)) return `(${id}) is one of them twice`
    taken.add(byIdentifier)
    return byIdentifier
  })
}

const notGiven = (source: BatchSource, why: string): IdempotencyConfigError => new IdempotencyConfigError(
  `idempotency: the handler's answer is aligned with event.${fieldOf(source)} as it left them, ` +
  `which are not the records it was given (${why}). ` +
  `Keep those records, in any order, or copies carrying ${source.identityName}`)

/**
 * The records a handler's own `batchItemFailures` names failed. Lambda reads the whole batch as
 * failed when an entry has no `itemIdentifier` (or a bad key name), an empty or null one, or one
 * that names no record of the batch, so such an answer completes nothing here either: it throws.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html (success and failure conditions)
 * https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html
 */
export const namedFailed = (
  failures: unknown, delivered: readonly RecordState[], source: BatchSource
): Set<string> => {
  if (!Array.isArray(failures)) throw unreadable(source, 'batchItemFailures is not a list')
  const ids = new Set(delivered.map((state) => state.id))
  return new Set(failures.map((entry: unknown, i) => {
    const id = identifierText(source, (entry as { itemIdentifier?: unknown } | null)?.itemIdentifier)
    if (id === undefined || !ids.has(id)) {
      const why = id === undefined ? 'has no itemIdentifier Lambda can read' : `names no record of the batch (${id})`
      throw unreadable(source, `entry ${i} ${why}`)
    }
    return id
  }))
}

const unreadable = (source: BatchSource, why: string): IdempotencyConfigError => new IdempotencyConfigError(
  `idempotency: Lambda fails the whole batch on this batchItemFailures (${why}): ` +
  `it expects { itemIdentifier: ${source.identifierShape} } naming a record of the batch. ` +
  'No record was completed on its strength')
