import { forEachBounded } from '../bounded.js'
import { IdempotencyConfigError, IdempotencyHeldBackError, IdempotencyKeyError, IdempotencyPayloadMismatchError } from '../errors.js'
import { admit, claim } from '../lifecycle/claim.js'
import { compileSelector } from '../lifecycle/key.js'
import { defaultNamespace } from '../options.js'
import type { LifecycleConfig, Unit } from '../lifecycle/config.js'
import type { Lease } from '../lifecycle/lease.js'
import { withinDeadline } from '../lifecycle/deadline.js'
import { prepareUnit, type Selection } from '../lifecycle/prepare.js'
import type { IdempotencyRecord } from '../stores/store.js'
import type { BatchSource } from '../sources/source.js'
import type { RecordState } from './state.js'

/** Identity, ordering group, key and payload hash of every record, taken before the handler can mutate them. */
export const prepareRecords = (source: BatchSource, selection: Selection, records: readonly unknown[], context: unknown, event?: unknown): RecordState[] => {
  const groupOf = source.orderingGroups(records)
  // The default key of a source whose records do not say everything of their place (a Kafka
  // record names its topic, partition and offset, not its cluster) takes the rest from the event.
  const scope = selection.defaultKey === true ? source.keyScope?.(event) : undefined
  const { key } = selection
  if (scope !== undefined) selection = { ...selection, key: (unit, ctx) => ({ scope, at: key(unit, ctx) }) }
  return records.map((record) => {
    const id = record === null || typeof record !== 'object' ? undefined : source.itemIdentifier(record)
    if (id === undefined) {
      throw new IdempotencyConfigError(`idempotency: every ${source.eventSource} record needs ${source.identityName} (it is how a failure is reported)`)
    }
    const state: RecordState = { record, id, ...(groupOf === undefined ? {} : { group: groupOf(record) }) }
    try {
      state.unit = prepareUnit(selection, record, context, source.attempt(record), source.label(record))
    } catch (error) {
      state.outcome = { kind: 'rejected', error: error as IdempotencyKeyError }
    }
    return state
  })
}

/**
 * The key `idempotency` with its defaults stores `record` under (the source's default key, under
 * the function's name): what `perRecord` gives a record as `key` when no middleware claimed it.
 * Throws the record's `IdempotencyKeyError` when it has none to give.
 */
export const defaultKeyOf = (source: BatchSource, event: unknown, record: unknown, context: unknown): string => {
  const selection: Selection = { namespace: defaultNamespace(), key: compileSelector(source.defaults.key, 'key', source.encoded ?? []), keyName: 'the default key', defaultKey: true }
  const [state] = prepareRecords(source, selection, [record], context, event)
  if (state?.unit !== undefined) return state.unit.key
  throw state?.outcome?.kind === 'rejected' ? state.outcome.error : new IdempotencyConfigError(`idempotency: ${source.label(record)} has no key`)
}

/**
 * Claims every record of the batch (docs/architecture.md: the batch flow, claim): copies of a key share its first
 * record's fate, probable duplicates are read in bulk first, and in an ordered source a
 * group stops at its first record that cannot run.
 */
export const claimBatch = async (config: LifecycleConfig, source: BatchSource, concurrency: number, states: RecordState[], lease: Lease): Promise<void> => {
  const ordered = states.some((s) => s.group !== undefined)
  const primaries: RecordState[] = []
  const bySlot = new Map<string, RecordState>()
  for (const state of states) {
    if (state.unit === undefined) continue
    // In an ordered source a copy shares its original's fate only within its own group:
    // across groups it is claimed on its own (and meets the original's claim), so that each
    // group keeps its order whatever happens in the other.
    const slot = ordered ? `${state.group ?? ''}\u0000${state.unit.key}` : state.unit.key
    const primary = bySlot.get(slot)
    if (primary === undefined) {
      bySlot.set(slot, state)
      primaries.push(state)
    } else if (primary.unit?.payloadHash !== state.unit.payloadHash) {
      state.outcome = { kind: 'rejected', error: new IdempotencyPayloadMismatchError(state.unit.key) }
    } else {
      state.outcome = { kind: 'copy', of: primary }
    }
  }
  const isProbableDuplicate = (s: RecordState): boolean => (source.alwaysRead === true || (s.unit as Unit).attempt > 1) && config.cache?.get((s.unit as Unit).key, lease.nowMs) === undefined
  const probable = primaries.filter(isProbableDuplicate)
  let standing = new Map<string, IdempotencyRecord>()
  const claimOne = async (state: RecordState): Promise<void> => {
    const unit = state.unit as Unit
    state.outcome = config.transactOnly === true ? admit(config, unit, lease, standing.get(unit.key)) : await claim(config, unit, lease, standing.get(unit.key))
  }

  if (!ordered) {
    const probableSet = new Set(probable)
    const first = primaries.filter((s) => !probableSet.has(s))
    if (first.length > 0 && probable.length > 0 && concurrency > 1) {
      // First deliveries need no read: claim them while the redeliveries are being read.
      await Promise.all([
        forEachBounded(first, concurrency - 1, claimOne),
        readProbableDuplicates(config, probable, 1).then((found) => { standing = found })
      ])
    } else {
      standing = await readProbableDuplicates(config, probable, concurrency)
      await forEachBounded(first, concurrency, claimOne)
    }
    await forEachBounded(probable, concurrency, claimOne)
    return
  }
  // Ordered (docs/architecture.md: the batch flow, claim): a group is claimed in order and stops at its first record that cannot run.
  standing = await readProbableDuplicates(config, probable, concurrency)
  await forEachBounded([...groupsOf(states)], concurrency, async ([group, members]) => {
    let blocker: RecordState | undefined
    for (const state of members) {
      if (blocker !== undefined) {
        if (state.outcome === undefined || state.outcome.kind === 'copy') {
          state.outcome = { kind: 'rejected', error: new IdempotencyHeldBackError(`an earlier record of ${source.groupName} ${group} (${blocker.id}) could not run`, { key: state.unit?.key, group }) }
        }
        continue
      }
      if (state.outcome === undefined) await claimOne(state)
      if (state.outcome?.kind === 'rejected') blocker = state
    }
  })
}

/** The records of each ordering group, in batch order. */
export const groupsOf = <T extends { group?: string }>(states: readonly T[]): Map<string, T[]> => {
  const groups = new Map<string, T[]>()
  for (const state of states) {
    const members = groups.get(state.group ?? '')
    if (members === undefined) groups.set(state.group ?? '', [state])
    else members.push(state)
  }
  return groups
}

/**
 * Redeliveries are probably duplicates: one bulk read costs less than a refused write each
 * (on DynamoDB, one consistent read of up to 100 keys, at a fifth of a write unit's price).
 * Read in slices of as many keys as the store's `read` takes, within `slots` requests in flight.
 */
const readProbableDuplicates = async (config: LifecycleConfig, probable: RecordState[], slots: number): Promise<Map<string, IdempotencyRecord>> => {
  const found = new Map<string, IdempotencyRecord>()
  const read = config.store.read?.bind(config.store)
  if (read === undefined || probable.length === 0) return found
  const slice = config.store.limits?.maxReadKeys ?? probable.length
  const slices: string[][] = []
  for (let i = 0; i < probable.length; i += slice) slices.push(probable.slice(i, i + slice).map((s) => (s.unit as Unit).key))
  await forEachBounded(slices, slots, async (keys) => {
    try {
      // Given up at the deadline, a read changes nothing: the claims that follow decide.
      for (const [key, record] of await withinDeadline(config, 'read', `${keys[0] ?? ''} (and ${keys.length - 1} more)`, async (signal) => await read(keys, { signal }))) found.set(key, record)
    } catch (error) {
      // Reading is only an optimisation: the claims decide, one request each.
      config.log.warn({ message: 'idempotency: read before claim failed; claiming instead', error })
    }
  })
  return found
}
