import { IdempotencyConfigError } from '../errors.js'
import { base64PartsOf } from '../http/body.js'
import { defaultEventKey } from '../http/request.js'
import { prepareRecords } from '../batch/claim-batch.js'
import { compileSelector } from '../keys/selector.js'
import { prepareUnit, type Selection } from '../keys/prepare.js'
import { defaultNamespace } from '../keys/prepare.js'
import { sourceOf, sources } from '../sources/index.js'
import { listOf } from '../sources/source.js'

/** The stored key of each record of a batch, or of a whole event; `error` for a record with none. */
export type KeysOf =
  | { source: string, records: Array<{ id: string, key: string } | { id: string, error: string }> }
  | { source: 'event', key: string }

/**
 * The keys the middleware stores `input` under, computed as it computes them: a batch event
 * (or one record of one, recognised by its `eventSource`) gives a key per record with the
 * source's default key unless `keyPath` is given; any other event is one key, its default the
 * middleware's (the whole event, or an HTTP request's `Idempotency-Key`). Throws the
 * `IdempotencyKeyError` of a whole event that has no key. `tenant`: the `context.tenantId` of a
 * function in Lambda's tenant isolation mode.
 */
export const keysOf = (
  input: unknown,
  options: { keyPath?: string, namespace?: string, tenant?: string } = {}
): KeysOf => {
  if (options.keyPath !== undefined) {
    // A path that does not compile is the caller's mistake, said before any event is read.
    try {
      compileSelector(options.keyPath, 'key')
    } catch (error) {
      throw new IdempotencyConfigError(`key path: ${(error as Error).message}`)
    }
  }
  const namespace = options.namespace ?? defaultNamespace()
  // A function in Lambda's tenant isolation mode scopes every key by its invocation's tenant.
  const context = options.tenant === undefined ? undefined : { tenantId: options.tenant }
  const single = (input as { eventSource?: unknown } | null)?.eventSource
  // One record on its own (its source named, but no list of records): read as a batch of one.
  const isLoneRecord = typeof single === 'string' && sources[single] !== undefined &&
    listOf(sources[single], input) === undefined
  const event = isLoneRecord ? { Records: [input] } : input
  const source = sourceOf(event)
  if (source !== undefined) {
    const selection: Selection = {
      namespace,
      key: compileSelector(options.keyPath ?? source.defaults.key, 'key', source.encoded ?? []),
      keyName: options.keyPath === undefined ? 'the default key' : `key path "${options.keyPath}"`,
      defaultKey: options.keyPath === undefined
    }
    const states = prepareRecords(source, selection, listOf(source, event) ?? [], context, event)
    return {
      source: source.eventSource,
      records: states.map(({ id, fate }) =>
        fate.kind === 'keyed' ? { id, key: fate.unit.key } : { id, error: fate.error.message })
    }
  }
  const selection: Selection = {
    namespace,
    key: options.keyPath === undefined
      ? (unit) => defaultEventKey(unit)
      : compileSelector(options.keyPath, 'key', base64PartsOf),
    keyName: options.keyPath === undefined ? 'the event' : `key path "${options.keyPath}"`
  }
  return { source: 'event', key: prepareUnit(selection, event, context, 1, 'event').key }
}
