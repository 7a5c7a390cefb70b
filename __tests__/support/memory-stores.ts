import middy from '@middy/core'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, type IdempotencyOptions, type IdempotencyStore } from '../../src/index.js'
import { sqsPartialBatchFailure } from './middy.js'
import { lambdaContext, recordingLogger, sqsEvent } from './sqs.js'

/** A MemoryStore whose every call is counted and can be made to fail. */
export class CountingStore extends MemoryStore {
  calls: string[] = []
  inFlight = 0
  maxInFlight = 0
  failOn = new Set<string>()
  async #track<T> (name: string, run: () => Promise<T>): Promise<T> {
    this.calls.push(name)
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    try {
      await Promise.resolve()
      if (this.failOn.has(name)) throw Object.assign(new Error(`${name} refused`), { name: 'ThrottlingException' })
      return await run()
    } finally {
      this.inFlight--
    }
  }

  override claim (...args: Parameters<MemoryStore['claim']>) { return this.#track('claim', async () => await super.claim(...args)) }
  override complete (...args: Parameters<MemoryStore['complete']>) { return this.#track('complete', async () => await super.complete(...args)) }
  override fail (...args: Parameters<MemoryStore['fail']>) { return this.#track('fail', async () => await super.fail(...args)) }
  override release (...args: Parameters<MemoryStore['release']>) { return this.#track('release', async () => await super.release(...args)) }
  override read (...args: Parameters<MemoryStore['read']>) { return this.#track('read', async () => await super.read(...args)) }
}

/** A hand-written SQS handler (`Promise.allSettled`) behind the middleware on `store`, and the batches it was given. */
export const allSettledConsumer = (
  store: IdempotencyStore, work: (r: SQSRecord) => Promise<unknown>, options: Partial<IdempotencyOptions> = {}
) => {
  const seen: SQSRecord[][] = []
  const handler = middy<SQSEvent>()
    .use(sqsPartialBatchFailure({ logger: false as never }))
    .use(idempotency({ store, namespace: 'unit', logger: recordingLogger(), ...options }))
    .handler(async (event) => { seen.push(event.Records); return await Promise.allSettled(event.Records.map(work)) })
  return { handler, seen, invoke: async (records: SQSRecord[], context = lambdaContext()) => await handler(sqsEvent(records), context) }
}

/** Resolves once `condition` holds, looking again after each turn of the event loop (at most 5 s). */
export const waitUntil = async (condition: () => boolean): Promise<void> => {
  const deadline = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met')
    await new Promise((resolve) => setImmediate(resolve))
  }
}
