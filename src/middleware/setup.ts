import type { LifecycleConfig } from '../unit/config.js'
import { compileSelector, type EncodedParts, type Selector } from '../keys/selector.js'
import type { Selection } from '../keys/prepare.js'
import { lifecycleConfig, resolveOptions, type IdempotencyOptions, type ResolvedOptions } from '../options.js'

/** The key and payload an event family selects when the options name none. */
type DefaultSelectors = { key: Selector, payload: Selector }

/** What every event family of one middleware shares: its options, its lifecycle, and how it selects a key. */
export interface Setup {
  resolved: ResolvedOptions
  /** The `maxStoreRequests` option as given (records run at once default to it, not to the store's bound). */
  maxStoreRequests?: number
  config: LifecycleConfig
  /**
   * The key and payload selection, from the options or else from `defaults`; `defaultKeyName` names the
   * default key in errors.
   */
  selection: (defaults: DefaultSelectors, defaultKeyName: string, encoded?: EncodedParts) => Selection
}

/** Checks the options and builds the lifecycle every unit of this middleware goes through. */
export const setUp = (options: IdempotencyOptions<any>): Setup => {
  const resolved = resolveOptions(options)
  const config = lifecycleConfig(resolved)
  const selection = (defaults: DefaultSelectors, defaultKeyName: string, encoded: EncodedParts = []): Selection => {
    const key = compileSelector(resolved.key ?? defaults.key, 'key', encoded)
    const payload = resolved.payload === false
      ? undefined
      : compileSelector(resolved.payload ?? defaults.payload, 'payload', encoded)
    const keyName = typeof resolved.key === 'string'
      ? `key path "${resolved.key}"`
      : resolved.key === undefined ? defaultKeyName : 'the key function'
    return {
      namespace: resolved.namespace,
      key,
      keyName,
      defaultKey: resolved.key === undefined,
      ...(payload === undefined ? {} : { payload })
    }
  }
  const { maxStoreRequests } = options
  return { resolved, ...(maxStoreRequests === undefined ? {} : { maxStoreRequests }), config, selection }
}
