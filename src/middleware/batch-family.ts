import { sourceByMode, sourceOf } from '../sources/index.js'
import type { BatchSource } from '../sources/source.js'
import { batchAdapter } from './batch-hooks.js'
import { HandlerKind } from './handler-kind.js'
import type { MiddyRequest } from '../types.js'
import type { Hooks } from './idempotency.js'
import { defaults } from '../defaults.js'
import type { Setup } from './setup.js'

/**
 * The batch events of one middleware (SQS, Kinesis, DynamoDB Streams, Kafka): the hooks of the
 * request's source, made the first time the source is met, or undefined when the event is no batch.
 */
export const batchFamily = (
  { resolved, maxStoreRequests, config, selection }: Setup
): (request: MiddyRequest) => Hooks | undefined => {
  const handler = new HandlerKind()
  const forced = resolved.mode === 'auto' || resolved.mode === 'event' ? undefined : sourceByMode(resolved.mode)
  const adapters = new Map<BatchSource, Hooks>()
  return (request) => {
    const source = forced ?? sourceOf(request.event)
    if (source === undefined) return undefined
    let adapter = adapters.get(source)
    if (adapter === undefined) {
      const keyName = typeof source.defaults.key === 'string' ? `key path "${source.defaults.key}"` : 'the default key'
      adapter = batchAdapter(config, source, selection(source.defaults, keyName, source.encoded),
        {
          maxStoreRequests: resolved.maxStoreRequests,
          recordConcurrency: maxStoreRequests ?? defaults.maxStoreRequests,
          timeoutMarginMs: resolved.timeoutMarginMs
        }, handler)
      adapters.set(source, adapter)
    }
    return adapter
  }
}
