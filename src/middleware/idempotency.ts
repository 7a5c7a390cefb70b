import { defaultEventKey, defaultEventPayload, runsUnprotected, type CallerOf } from '../http/request.js'
import { wholeEventAdapter } from './event-hooks.js'
import { batchAdapter } from './batch-hooks.js'
import { HandlerKind } from './handler-kind.js'
import { sourceByMode, sourceOf } from '../sources/index.js'
import type { BatchSource } from '../sources/source.js'
import type { Adapter, MiddyRequest } from './hooks.js'
import type { LifecycleConfig } from '../unit/config.js'
import { createLog } from '../observe/log.js'
import { compileSelector, type Selector } from '../keys/selector.js'
import { LocalCache } from '../unit/local-cache.js'
import { defaults, resolveOptions, type IdempotencyOptions } from './options.js'
import { isDisabled } from './disabled.js'
import type { IdempotencyRequest } from '../types.js'

/**
 * The Middy middleware object returned by {@link idempotency}.
 *
 * @example
 * ```ts
 * const middleware: IdempotencyMiddleware = idempotency({ store })
 * middy().use(middleware)
 * ```
 */
export interface IdempotencyMiddleware {
  before: (request: IdempotencyRequest) => Promise<unknown>
  after: (request: IdempotencyRequest) => Promise<void>
  onError: (request: IdempotencyRequest) => Promise<void>
}

/**
 * Makes a Middy handler idempotent. On an SQS batch, each record is claimed, run and
 * completed on its own, and only the records that really failed are reported; on any
 * other event, the whole event is one unit of work.
 *
 * Put it after `@middy/sqs-partial-batch-failure` (whose `after` must run after ours),
 * and before middlewares that transform the event for the handler.
 *
 * @example
 * ```ts
 * import middy from '@middy/core'
 * import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
 * import { idempotency, DynamoDBStore } from 'middy-idempotency'
 * import type { SQSEvent } from 'aws-lambda'
 *
 * export const handler = middy<SQSEvent>()
 *   .use(sqsPartialBatchFailure())
 *   .use(idempotency({ store: new DynamoDBStore({ tableName: 'IdempotencyStore' }) }))
 *   .handler(async (event) => Promise.allSettled(event.Records.map(chargeCard)))
 * ```
 */
export const idempotency = <TEvent = any>(options: IdempotencyOptions<TEvent>): IdempotencyMiddleware => {
  const resolved = resolveOptions(options)
  const handler = new HandlerKind()
  const config: LifecycleConfig = {
    store: resolved.store,
    expiresAfterSeconds: resolved.expiresAfterSeconds,
    onFailure: resolved.onFailure,
    log: createLog(resolved.logger, resolved.logLevel),
    now: resolved.now,
    clockSkewMs: resolved.clockSkewMs,
    ...(resolved.effects === 'transact-only' ? { transactOnly: true } : {}),
    ...(resolved.onOutcome === undefined ? {} : { onOutcome: resolved.onOutcome }),
    ...(resolved.localCacheSize > 0 ? { cache: new LocalCache(resolved.localCacheSize) } : {})
  }
  const selection = (defaults: { key: Selector, payload: Selector }, defaultKeyName: string, encoded: readonly string[] = []) => {
    const key = compileSelector(resolved.key ?? defaults.key, 'key', encoded)
    const payload = resolved.payload === false ? undefined : compileSelector(resolved.payload ?? defaults.payload, 'payload', encoded)
    const keyName = typeof resolved.key === 'string'
      ? `key path "${resolved.key}"`
      : resolved.key === undefined ? defaultKeyName : 'the key function'
    return { namespace: resolved.namespace, key, keyName, defaultKey: resolved.key === undefined, ...(payload === undefined ? {} : { payload }) }
  }
  // One adapter per batch source, made the first time the source is met.
  const batchAdapters = new Map<BatchSource, Adapter>()
  const adapterOf = (source: BatchSource): Adapter => {
    let adapter = batchAdapters.get(source)
    if (adapter === undefined) {
      const keyName = typeof source.defaults.key === 'string' ? `key path "${source.defaults.key}"` : 'the default key'
      adapter = batchAdapter(config, source, selection(source.defaults, keyName, source.encoded), { concurrency: resolved.concurrency, recordConcurrency: options.concurrency ?? defaults.concurrency, timeoutMarginMs: resolved.timeoutMarginMs }, handler)
      batchAdapters.set(source, adapter)
    }
    return adapter
  }
  const { caller } = resolved
  const eventKey: Selector = caller === undefined ? defaultEventKey : (unit, context) => defaultEventKey(unit, context, caller as CallerOf)
  const event = wholeEventAdapter(config, selection({ key: eventKey, payload: defaultEventPayload }, 'the event'), {
    timeoutMarginMs: resolved.timeoutMarginMs,
    // Only the default key leaves GET and the like without the header unprotected.
    ...(resolved.key === undefined ? { runsUnprotected } : {}),
    ...(resolved.responseHook === undefined ? {} : { responseHook: resolved.responseHook })
  })
  const forced = resolved.mode === 'auto' || resolved.mode === 'event' ? undefined : sourceByMode(resolved.mode)
  const adapterFor = (request: MiddyRequest): Adapter => {
    if (resolved.mode === 'event') return event
    const source = forced ?? sourceOf(request.event)
    return source === undefined ? event : adapterOf(source)
  }

  const chosen = new WeakMap<MiddyRequest, Adapter>()

  const idempotencyBefore = async (request: MiddyRequest): Promise<unknown> => {
    // Off for a local run: nothing claimed, so `after` and `onError` find no adapter and do nothing.
    if (isDisabled(config.log)) return undefined
    const adapter = adapterFor(request)
    chosen.set(request, adapter)
    return adapter.before(request)
  }
  const idempotencyAfter = async (request: MiddyRequest): Promise<void> => chosen.get(request)?.after(request)
  const idempotencyOnError = async (request: MiddyRequest): Promise<void> => chosen.get(request)?.onError(request)

  return { before: idempotencyBefore, after: idempotencyAfter, onError: idempotencyOnError }
}
