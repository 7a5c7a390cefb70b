import { describe, expect, test } from '@jest/globals'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, perRecord } from '../../../src/index.js'
import type { CommitResult } from '../../../src/store.js'
import { deferred } from '../../support/deferred.js'
import { batchMiddyVersions, sqsPartialBatchFailure } from '../../support/middy.js'
import { failedIds, lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

type Gate = ReturnType<typeof deferred<void>>

/**
 * A MemoryStore whose completions wait at a gate the test opens, and which logs what happens
 * by record body (the work tells it which key is whose).
 */
class GatedStore extends MemoryStore {
  readonly events: string[] = []
  readonly bodyOf = new Map<string, string>()
  readonly gates = new Map<string, Gate>()
  readonly failing = new Set<string>()
  inFlight = 0
  maxInFlight = 0
  #called = new Map<string, Gate>()

  /** Holds the completion of `body` until the returned function is called. */
  hold (body: string): () => void {
    const gate = deferred<void>()
    this.gates.set(body, gate)
    return () => { gate.resolve() }
  }

  /** Resolves once the completion of `body` has reached the store. */
  async called (body: string): Promise<void> { await this.#calledOf(body).promise }

  override async complete (...args: Parameters<MemoryStore['complete']>): Promise<boolean> {
    const body = this.bodyOf.get(args[0]) ?? '?'
    this.events.push(`complete ${body} called`)
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    this.#calledOf(body).resolve()
    try {
      await this.gates.get(body)?.promise
      if (this.failing.has(body)) throw Object.assign(new Error('the store refused'), { name: 'ThrottlingException' })
      return await super.complete(...args)
    } finally {
      this.inFlight--
      this.events.push(`complete ${body} returned`)
    }
  }

  #calledOf (body: string): Gate {
    const called = this.#called.get(body) ?? deferred<void>()
    this.#called.set(body, called)
    return called
  }
}

/** A GatedStore that commits `transact` writes with the completion (kept, not applied), through the same gate. */
class GatedCommittingStore extends GatedStore {
  async commit (key: string, leaseToken: string, outcome: { expiry: number, responseData?: string }): Promise<CommitResult> {
    return await this.complete(key, leaseToken, outcome) ? { status: 'committed' } : { status: 'lease-lost' }
  }
}

describe.each(batchMiddyVersions)('perRecord: a record\'s slot is its work\'s, its settlement the store\'s, %s', (_name, middy) => {
  /** `transact`: each record's work queues a write, committed with its completion (returning nothing). */
  const stack = (store: GatedStore, options: { records?: number, store?: number, transact?: boolean } = {}) => {
    const started: string[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({
        store, logger: false, ...(options.store === undefined ? {} : { maxStoreRequests: options.store })
      }))
      .handler(perRecord(async (record: SQSRecord, { key, transact }) => {
        store.bodyOf.set(key as string, record.body)
        started.push(record.body)
        store.events.push(`work ${record.body}`)
        if (options.transact !== true) return record.body
        transact({ Put: { TableName: 'Orders', Item: { id: record.body } } })
      }, options.records === undefined ? {} : { concurrency: options.records }))
    return { started, invoke: async (records: SQSRecord[]) => await handler(sqsEvent(records), lambdaContext()) }
  }

  test('the next record starts when a record\'s work ends, while its completion is still being written', async () => {
    const store = new GatedStore()
    const open = store.hold('a')
    const { started, invoke } = stack(store, { records: 1 })
    const answer = invoke([sqsRecord('a'), sqsRecord('b')])
    await store.called('b')
    // a's completion is still held: b ran in the slot a's work gave up.
    expect(started).toEqual(['a', 'b'])
    expect(store.records().map((r) => r.status).sort()).toEqual(['COMPLETED', 'IN_PROGRESS'])
    open()
    expect(failedIds(await answer)).toEqual([])
    expect(store.records().map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED'])
  })

  test('settlements stay within the store\'s bound, and finished records waiting for it keep their slots: no more start', async () => {
    const store = new GatedStore()
    const bodies = Array.from({ length: 10 }, (_, i) => `r${i}`)
    const opens = bodies.map((body) => store.hold(body))
    // 3 records at once, 2 store requests at once.
    const { started, invoke } = stack(store, { records: 3, store: 2 })
    const answer = invoke(bodies.map((body) => sqsRecord(body)))
    await store.called('r1')
    // r0 and r1 are being written (their slots went to r3 and r4); r2, r3 and r4 wait for the
    // store holding theirs, so r5 does not start: finished work never piles up unwritten.
    expect(started).toEqual(['r0', 'r1', 'r2', 'r3', 'r4'])
    expect(store.inFlight).toBe(2)
    for (const open of opens) open()
    expect(failedIds(await answer)).toEqual([])
    expect(store.maxInFlight).toBe(2)
    expect(started).toEqual(bodies)
    expect(store.records().filter((r) => r.status === 'COMPLETED')).toHaveLength(10)
  })

  test('in an ordering group the next record starts only once the previous one is settled', async () => {
    const store = new GatedStore()
    const open = store.hold('a1')
    const { invoke } = stack(store)
    const answer = invoke([sqsRecord('a1', { groupId: 'A' }), sqsRecord('a2', { groupId: 'A' })])
    await store.called('a1')
    open()
    expect(failedIds(await answer)).toEqual([])
    expect(store.events).toEqual(['work a1', 'complete a1 called', 'complete a1 returned', 'work a2', 'complete a2 called', 'complete a2 returned'])
  })

  test('a record whose transact writes commit with its completion keeps its slot until they are committed: they are its work\'s effects', async () => {
    const store = new GatedCommittingStore()
    const open = store.hold('a')
    const answer = stack(store, { records: 1, transact: true }).invoke([sqsRecord('a'), sqsRecord('b')])
    await store.called('a')
    open()
    expect(failedIds(await answer)).toEqual([])
    expect(store.events).toEqual(['work a', 'complete a called', 'complete a returned', 'work b', 'complete b called', 'complete b returned'])
  })

  test('a group whose record has settled takes the next free slot before a group not yet started', async () => {
    const store = new GatedCommittingStore()
    const records = [sqsRecord('a1', { groupId: 'A' }), sqsRecord('b1', { groupId: 'B' }), sqsRecord('a2', { groupId: 'A' })]
    expect(failedIds(await stack(store, { records: 1, transact: true }).invoke(records))).toEqual([])
    expect(store.events.filter((event) => event.startsWith('work'))).toEqual(['work a1', 'work a2', 'work b1'])
  })

  test('a group whose record could not be settled holds back the rest: they never run and are released', async () => {
    const store = new GatedStore()
    store.failing.add('a1')
    const { started, invoke } = stack(store)
    const records = [sqsRecord('a1', { groupId: 'A' }), sqsRecord('a2', { groupId: 'A' }), sqsRecord('b1', { groupId: 'B' })]
    const answer = await invoke(records)
    expect(failedIds(answer).sort()).toEqual([records[0]?.messageId, records[1]?.messageId].sort())
    expect(started.sort()).toEqual(['a1', 'b1'])
    // a1 keeps its lease (its completion failed); a2 never ran and has no record; b1 is COMPLETED.
    expect(store.records().map((r) => r.status).sort()).toEqual(['COMPLETED', 'IN_PROGRESS'])
  })
})

describe.each(batchMiddyVersions)('perRecord at Middy\'s timeout, while a finished record\'s completion is slow, %s', (_name, middy) => {
  test('the records not started are released and the batch answered at once, not behind the slow write', async () => {
    const store = new GatedStore()
    const open = store.hold('a')
    const handler = middy<SQSEvent>({ timeoutEarlyInMillis: 100, timeoutEarlyResponse: () => ({ batchItemFailures: [] }) })
      .use(sqsPartialBatchFailure({ logger: false as never }))
      // No margin: a's completion, slow, is still within the store calls' bound (the deadline
      // less timeoutMarginMs) when Middy's timeout answers, 100 ms before the deadline.
      .use(idempotency({ store, logger: false, maxStoreRequests: 1, timeoutMarginMs: 0 }))
      .handler(perRecord(async (record: SQSRecord, { key, signal }) => {
        store.bodyOf.set(key, record.body)
        // b runs until Middy's early timeout aborts it.
        if (record.body === 'b') await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
        return record.body
      }))
    const records = [sqsRecord('a'), sqsRecord('b'), sqsRecord('c')]
    const deadline = Date.now() + 400
    let released = false
    let answeredWhileHeld = false
    const answer = handler(sqsEvent(records), lambdaContext(() => deadline - Date.now())).then((response) => { answeredWhileHeld = !released; return response })
    // a's completion stays held until the batch has answered (or, were it waiting behind it, until the test gives up on it).
    const giveUp = setTimeout(() => { released = true; open() }, 5_000)
    const response = await answer
    clearTimeout(giveUp)
    // At the answer: a and b hold their leases (a's completion on its way), c has no record.
    const atAnswer = store.records().map((r) => r.status)
    released = true
    open()
    expect(atAnswer).toEqual(['IN_PROGRESS', 'IN_PROGRESS'])
    expect(answeredWhileHeld).toBe(true)
    // a's completion was not stored yet, b timed out (its lease kept), c never started (released):
    // none is acknowledged; a redelivery replays a once its completion lands, and runs c.
    expect(failedIds(response).sort()).toEqual(records.map((r) => r.messageId).sort())
  })
})
