import { Burst } from '../burst.js'
import type { ClaimRecord, IdempotencyRecord, StoreCallOptions } from '../store.js'
import type { Item } from './items.js'
import type { Statement, Statements } from './statements.js'
import type { DynamoDBWire } from './wire.js'

/*
 * Grouped writes (docs/stores.md: DynamoDBStore): the claims, completions, failures and releases
 * made together go out as PartiQL BatchExecuteStatement requests of up to 25 statements, each
 * statement succeeding or failing on its own condition. Requests go one burst at a time: a call
 * made while one is out leaves with the others as soon as it returns. A call alone goes as its
 * single-item request, as it would without grouping (a whole event's claim pays no more).
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html
 */

/** Statements one BatchExecuteStatement request holds at most. */
const MAX_STATEMENTS = 25

/** What one statement answered: its error (a code, a message, the item with ALL_OLD) or its item. */
export interface StatementAnswer {
  Error?: { Code?: string, Message?: string, Item?: Item }
  Item?: Item
}

/** What became of a statement: the call's value, another statement to send next, or "ask alone". */
export type Outcome<T> = { value: T } | { next: Grouped<T> } | 'alone'

/** A call's statement and how to read its answer. */
export interface Grouped<T> {
  statement: Statement
  answer: (response: StatementAnswer) => Outcome<T>
}

interface Call<T> extends Grouped<T> {
  key: string
  signal: AbortSignal | undefined
  /** The burst of its invocation, where a next statement of the call goes too. */
  burst: Burst<Call<any>>
  /** The same call as its single-item request: its answer and its error are today's. */
  alone: () => Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
}

/** How grouped requests are sent, and what to do once the role turns out not to allow them. */
export interface GroupedSender {
  execute: (statements: Statement[], signal: AbortSignal | undefined) => Promise<Array<StatementAnswer | undefined>>
  /** The role may not run PartiQL statements: warn once, the store then sends single-item requests. */
  refused: (error: unknown) => void
}

/** An error DynamoDB answers when the role lacks an action, for a whole request or one statement. */
const isAccessDenied = (code: string | undefined): boolean =>
  code === 'AccessDeniedException' || code === 'AccessDenied'

/**
 * The grouped writes of one store. `active` turns false for the life of the instance once
 * DynamoDB refuses PartiQL to the role; calls then go alone. Calls are grouped only with calls of
 * their own invocation (`StoreCallOptions.invocation`): one invocation's request that never
 * answers holds no other's writes.
 */
export class GroupedWrites {
  active = true
  readonly #bursts = new WeakMap<object, Burst<Call<any>>>()
  readonly #shared = this.#burst()

  constructor (private readonly sender: GroupedSender) {}

  /** `grouped`'s answer, sent with the calls made beside it; `alone` when grouping is off or not allowed. */
  async write<T> (
    key: string,
    grouped: Grouped<T>,
    alone: () => Promise<T>,
    options: StoreCallOptions | undefined
  ): Promise<T> {
    if (!this.active) return await alone()
    const { signal, invocation } = options ?? {}
    let burst = invocation === undefined ? this.#shared : this.#bursts.get(invocation)
    if (burst === undefined) this.#bursts.set(invocation as object, burst = this.#burst())
    const queue = burst
    return await new Promise<T>((resolve, reject) => {
      queue.add({ ...grouped, key, signal, burst: queue, alone, resolve, reject })
    })
  }

  #burst (): Burst<Call<any>> {
    return new Burst<Call<any>>({
      maxCalls: MAX_STATEMENTS,
      // One request may not name an item twice (DynamoDB refuses it whole).
      keyOf: (call) => call.key,
      oneAtATime: true,
      send: async (calls) => { await this.#send(calls) }
    })
  }

  async #send (calls: Array<Call<any>>): Promise<void> {
    if (calls.length === 1 || !this.active) {
      for (const call of calls) this.#alone(call)
      return
    }
    // The request is given up with the first of its calls (at that call's deadline), so that a
    // request that never answers frees its socket and the calls queued behind it; the calls not
    // given up yet are then sent again, alone.
    const signals = calls.flatMap((c) => c.signal === undefined ? [] : [c.signal])
    const signal = signals.length === 0 ? undefined : AbortSignal.any(signals)
    let answers: Array<StatementAnswer | undefined>
    try {
      answers = await this.sender.execute(calls.map((c) => c.statement), signal)
    } catch (error) {
      const name = (error as { name?: string } | undefined)?.name
      if (signal?.aborted === true) for (const call of calls) this.#aloneUnlessGivenUp(call, error)
      else if (isAccessDenied(name)) for (const call of calls) this.#aloneAfterDenial(call, error)
      // A request refused as invalid may be one call's doing (its input): each call alone fails only its own record.
      else if (name === 'ValidationException') for (const call of calls) this.#alone(call)
      else for (const call of calls) call.reject(error)
      return
    }
    calls.forEach((call, i) => {
      const answer = answers[i]
      if (answer === undefined) {
        // An answer cut short says nothing of the statement: the call asks again, alone.
        this.#alone(call)
        return
      }
      if (isAccessDenied(answer.Error?.Code)) {
        this.#aloneAfterDenial(call, answer.Error)
        return
      }
      const outcome = call.answer(answer)
      if (outcome === 'alone') this.#alone(call)
      else if ('next' in outcome) call.burst.add({ ...call, ...outcome.next })
      else call.resolve(outcome.value)
    })
  }

  #alone (call: Call<any>): void {
    call.alone().then(call.resolve, call.reject)
  }

  /** A call of a request given up: given up too when its own signal aborted, else sent again alone. */
  #aloneUnlessGivenUp (call: Call<any>, error: unknown): void {
    if (call.signal?.aborted === true) call.reject(call.signal.reason ?? error)
    else this.#alone(call)
  }

  /**
   * A call the role was refused as a statement: sent alone. Allowed alone, the role lacks the
   * PartiQL actions only, and grouping stops for the life of the store; refused alone too (no
   * access to the table, or to this key), the call fails with the single-item error, which names
   * the single-item action, and grouping goes on for the calls the role may make.
   */
  #aloneAfterDenial (call: Call<any>, denial: unknown): void {
    call.alone().then((value) => {
      this.#refused(denial)
      call.resolve(value)
    }, call.reject)
  }

  #refused (error: unknown): void {
    if (!this.active) return
    this.active = false
    this.sender.refused(error)
  }
}

/**
 * How many times a grouped claim inserts again a key whose record vanished before its takeover, before
 * claiming alone.
 */
const MAX_VANISHED = 2

/**
 * A grouped claim: an INSERT of the new key; when the key exists, the fenced takeover UPDATE,
 * whose refusal returns the record in the way. A record deleted between the two (released,
 * or taken by TTL) makes the UPDATE fail without an item: the key is inserted again, at most
 * MAX_VANISHED times, then claimed alone (one PutItem decides both cases at once).
 */
export const groupedClaim = (statements: Statements, fromItem: (item: Item) => IdempotencyRecord, record: ClaimRecord,
  nowMs: number, vanished = 0): Grouped<IdempotencyRecord | undefined> => ({
  statement: statements.insert(record),
  answer: (response) => response.Error === undefined
    ? { value: undefined }
    : response.Error.Code === 'DuplicateItem'
      ? { next: takeover(statements, fromItem, record, nowMs, vanished) }
      : 'alone'
})

const takeover = (statements: Statements, fromItem: (item: Item) => IdempotencyRecord, record: ClaimRecord,
  nowMs: number, vanished: number): Grouped<IdempotencyRecord | undefined> => ({
  statement: statements.takeover(record, nowMs),
  answer: (response) => {
    if (response.Error === undefined) return { value: undefined }
    if (response.Error.Code !== 'ConditionalCheckFailed') return 'alone'
    if (response.Error.Item !== undefined) return { value: fromItem(response.Error.Item) }
    return vanished < MAX_VANISHED ? { next: groupedClaim(statements, fromItem, record, nowMs, vanished + 1) } : 'alone'
  }
})

/**
 * A fenced completion, failure or release: false when the lease token no longer holds the record.
 * A release asks for the deleted item: PartiQL deletes a missing key without error, which is not a release.
 */
export const groupedFenced = (statement: Statement, release: boolean): Grouped<boolean> => ({
  statement,
  answer: (response) => response.Error === undefined
    ? { value: !release || response.Item !== undefined }
    : response.Error.Code === 'ConditionalCheckFailed' ? { value: false } : 'alone'
})

/** The IAM actions grouped writes need, named by the warning when the role lacks them. */
const PARTIQL_ACTIONS =
  'dynamodb:PartiQLInsert, dynamodb:PartiQLUpdate, dynamodb:PartiQLDelete and dynamodb:PartiQLSelect'

/** The one warning of a store whose role may not run PartiQL statements. */
export const warnPartiQLRefused = (tableName: string, error: unknown): void => {
  const message = error as { Message?: string, message?: string } | undefined
  process.emitWarning(`DynamoDBStore: the function's role may not run PartiQL statements on table ${tableName} ` +
    `(${message?.message ?? message?.Message ?? 'access denied'}): ` +
    'writes are sent one item a request for the life of this instance. ' +
    `Allow ${PARTIQL_ACTIONS} on the table to group a batch's writes, or set groupWrites: false.`,
  { code: 'MIDDY_IDEMPOTENCY_PARTIQL' })
}

/** The grouped writes of a store sending over `client`; a role refused PartiQL is warned of once. */
export const groupedWritesOn = (client: DynamoDBWire, tableName: string): GroupedWrites => new GroupedWrites({
  execute: async (statements, signal) => {
    const output = await client.send('BatchExecuteStatement', { Statements: statements }, { signal }) as
      { Responses?: StatementAnswer[] }
    return output.Responses ?? []
  },
  refused: (error) => { warnPartiQLRefused(tableName, error) }
})
