import { Bound, forEachBounded } from './schedule.js'
import {
  IdempotencyConfigError, IdempotencyHeldBackError, IdempotencyKeyError, IdempotencyPayloadMismatchError
} from '../errors.js'
import { admit, claim } from '../lifecycle/claim.js'
import { compileSelector } from '../keys/selector.js'
import { defaultNamespace } from '../keys/prepare.js'
import type { LifecycleConfig } from '../lifecycle/config.js'
import type { Unit } from '../keys/prepare.js'
import type { Lease } from '../lifecycle/deadline.js'
import { withinDeadline } from '../lifecycle/deadline.js'
import { prepareUnit, type Selection } from '../keys/prepare.js'
import type { IdempotencyRecord } from '../stores/store.js'
import type { BatchSource } from '../sources/source.js'
import type { Batch } from './batch.js'
import { preparedRecord, refused, type PreparedRecord, type RecordState } from './record-state.js'

/** Identity, ordering group, key and payload hash of every record, taken before the handler can mutate them. */
export const prepareRecords = (
  source: BatchSource,
  selection: Selection,
  records: readonly unknown[],
  context: unknown,
  event?: unknown
): PreparedRecord[] => {
  const groupOf = source.orderingGroups(records)
  // The default key of a source whose records do not say everything of their place (a Kafka
  // record names its topic, partition and offset, not its cluster) takes the rest from the event.
  const scope = selection.defaultKey === true ? source.keyScope?.(event) : undefined
  const { key } = selection
  if (scope !== undefined) selection = { ...selection, key: (unit, ctx) => ({ scope, at: key(unit, ctx) }) }
  return records.map((record) => {
    const id = record === null || typeof record !== 'object' ? undefined : source.itemIdentifier(record)
    if (id === undefined) {
      throw new IdempotencyConfigError(`idempotency: every ${source.eventSource} record needs ${source.identityName} ` +
        '(it is how a failure is reported)')
    }
    const group = groupOf?.(record)
    try {
      const label = source.label as (record: unknown) => string
      return preparedRecord(record, id, group, {
        unit: prepareUnit(selection, record, context, source.attempt(record), label)
      })
    } catch (error) {
      return preparedRecord(record, id, group, { error: error as IdempotencyKeyError })
    }
  })
}

/**
 * The key `idempotency` with its defaults stores `record` under (the source's default key, under
 * the function's name): what `perRecord` gives a record as `key` when no middleware claimed it.
 * Throws the record's `IdempotencyKeyError` when it has none to give.
 */
export const defaultKeyOf = (source: BatchSource, event: unknown, record: unknown, context: unknown): string => {
  const selection: Selection = {
    namespace: defaultNamespace(),
    key: compileSelector(source.defaults.key, 'key', source.encoded ?? []),
    keyName: 'the default key',
    defaultKey: true
  }
  const [state] = prepareRecords(source, selection, [record], context, event)
  if (state?.fate.kind === 'keyed') return state.fate.unit.key
  throw state?.fate.kind === 'unkeyed'
    ? state.fate.error
    : new IdempotencyConfigError(`idempotency: ${source.label(record)} has no key`)
}

/**
 * Claims every record of the batch (docs/architecture.md: the batch flow, claim): copies of a key share its first
 * record's fate, probable duplicates are read in bulk first, and in an ordered source a
 * group stops at its first record that cannot run. `copiesWait`: the handler is `perRecord`,
 * which makes a copy in another ordering group than its original wait for the original's
 * settlement (and its group behind it); any other handler cannot be made to wait, so the rest
 * of such a copy's group is held back instead.
 */
export const claimBatch = async (
  config: LifecycleConfig,
  source: BatchSource,
  maxStoreRequests: number,
  batch: Batch,
  lease: Lease,
  copiesWait = false
): Promise<void> => {
  const states = batch.records
  const ordered = states.some((s) => s.group !== undefined)
  const primaries: Primary[] = []
  const bySlot = new Map<string, Primary>()
  for (const state of states) {
    if (state.fate.kind !== 'keyed') continue
    const { unit } = state.fate
    // The original is the key's first record in batch order, whatever its group: a copy in
    // another group is not claimed (its claim would only meet the original's, in this very
    // invocation, and be refused as in progress elsewhere).
    const primary = bySlot.get(unit.key)
    if (primary === undefined) {
      const original = { state, unit }
      bySlot.set(unit.key, original)
      primaries.push(original)
    } else if (primary.unit.payloadHash !== unit.payloadHash) {
      batch.claimDecided(state, { kind: 'rejected', error: new IdempotencyPayloadMismatchError(unit.key) })
    } else {
      batch.claimDecided(state, { kind: 'copy', of: primary.state })
    }
  }
  const isProbableDuplicate = ({ unit }: Primary): boolean =>
    (source.alwaysRead === true || unit.attempt > 1) && config.cache?.get(unit.key, lease.nowMs) === undefined
  const probable = primaries.filter(isProbableDuplicate)
  let standing = new Map<string, IdempotencyRecord>()
  const claimOne = async ({ state, unit }: Primary): Promise<void> => {
    batch.claimDecided(state, config.transactOnly === true
      ? admit(config, unit, lease, standing.get(unit.key))
      : await claim(config, unit, lease, standing.get(unit.key)))
  }

  if (!ordered) {
    const probableSet = new Set(probable)
    const first = primaries.filter((s) => !probableSet.has(s))
    if (first.length > 0 && probable.length > 0 && maxStoreRequests > 1) {
      // First deliveries need no read: claim them while the redeliveries are being read.
      await Promise.all([
        forEachBounded(first, maxStoreRequests - 1, claimOne),
        readProbableDuplicates(config, probable, 1).then((found) => { standing = found })
      ])
    } else {
      standing = await readProbableDuplicates(config, probable, maxStoreRequests)
      await forEachBounded(first, maxStoreRequests, claimOne)
    }
    await forEachBounded(probable, maxStoreRequests, claimOne)
    return
  }
  standing = await readProbableDuplicates(config, probable, maxStoreRequests)
  await claimInOrder(source, maxStoreRequests, batch, claimOne, copiesWait)
}

/** A record claimed for its key (its key's first in the batch), and that key. */
interface Primary { state: RecordState, unit: Unit }

/**
 * Ordered (docs/architecture.md: the batch flow, claim): a group is claimed in order and stops at
 * its first record that cannot run. A copy of a record of another group waits for that
 * original's claim to be decided: refused, the copy cannot run either and holds its group back.
 *
 * No wait can close a cycle: an original is the first record of its key in batch order, so a copy
 * waits only for a record earlier in the batch than itself, and a record of a group waits only for
 * the records of its group before it, earlier in the batch too. Every wait points to an earlier
 * position of the batch, and the first record waits for nothing. A waiting copy holds none of the
 * `maxStoreRequests` places (they bound the claims, the store's requests, not the groups).
 */
const claimInOrder = async (
  source: BatchSource,
  maxStoreRequests: number,
  batch: Batch,
  claimOne: (primary: Primary) => Promise<void>,
  copiesWait: boolean
): Promise<void> => {
  const states = batch.records
  const requests = new Bound(maxStoreRequests)
  const decisions = new Map<RecordState, { promise: Promise<void>, resolve: () => void }>()
  for (const state of states) {
    if (state.fate.kind !== 'copy') continue
    const of = state.fate.of
    if (!decisions.has(of)) {
      let resolve!: () => void
      const promise = new Promise<void>((done) => { resolve = done })
      decisions.set(of, { promise, resolve })
    }
  }
  await Promise.all([...groupsOf(states)].map(async ([group, members]) => {
    let blocker: { state: RecordState, why: string } | undefined
    for (const state of members) {
      if (blocker !== undefined) {
        if (state.fate.kind === 'keyed' || state.fate.kind === 'copy') {
          const error = new IdempotencyHeldBackError(
            `an earlier record of ${source.groupName} ${group} (${blocker.state.id}) ${blocker.why}`,
            { key: state.fate.unit.key, group })
          batch.claimDecided(state, { kind: 'rejected', error })
        }
        decisions.get(state)?.resolve()
        continue
      }
      if (state.fate.kind === 'keyed') {
        const primary = { state, unit: state.fate.unit }
        await requests.run(async () => { await claimOne(primary) })
      }
      decisions.get(state)?.resolve()
      const fate = state.fate
      if (refused(state)) blocker = { state, why: 'could not run' }
      else if (fate.kind === 'copy' && fate.of.group !== group) {
        const original = fate.of
        await decisions.get(original)?.promise
        if (refused(original)) blocker = { state, why: 'could not run' }
        else if (original.fate.kind === 'claimed' && !copiesWait) {
          blocker = {
            state,
            why: `waits for its original in another ${source.groupName}, ` +
              'which this handler cannot be made to wait for (use perRecord)'
          }
        }
      }
    }
  }))
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
const readProbableDuplicates = async (
  config: LifecycleConfig,
  probable: Primary[],
  slots: number
): Promise<Map<string, IdempotencyRecord>> => {
  const found = new Map<string, IdempotencyRecord>()
  const read = config.store.read?.bind(config.store)
  if (read === undefined || probable.length === 0) return found
  const slice = config.store.limits?.maxReadKeys ?? probable.length
  const slices: string[][] = []
  for (let i = 0; i < probable.length; i += slice) slices.push(probable.slice(i, i + slice).map(({ unit }) => unit.key))
  await forEachBounded(slices, slots, async (keys) => {
    try {
      // Given up at the deadline, a read changes nothing: the claims that follow decide.
      const what = `${keys[0] ?? ''} (and ${keys.length - 1} more)`
      const records = await withinDeadline(config, 'read', what, async (bound) => await read(keys, bound))
      for (const [key, record] of records) found.set(key, record)
    } catch (error) {
      // Reading is only an optimisation: the claims decide, one request each.
      config.log.warn({ message: 'idempotency: read before claim failed; claiming instead', error })
    }
  })
  return found
}
