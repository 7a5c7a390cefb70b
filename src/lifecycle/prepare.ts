import { IdempotencyError, IdempotencyKeyError } from '../errors.js'
import type { Unit } from './config.js'
import { hashOf, storedKey, type Select } from './key.js'

/** The compiled `key` and `payload` options of one middleware. */
export interface Selection {
  namespace: string
  key: Select
  payload?: Select
}

/**
 * Computes key and payload hash once, before the handler runs, so a handler that
 * mutates its input cannot change them. `label` names the unit in errors.
 * Throws `IdempotencyKeyError` naming what was wrong.
 */
export const prepareUnit = (selection: Selection, input: unknown, context: unknown, attempt: number, label: string): Unit => {
  try {
    const key = selection.key(input, context)
    if (key === undefined || key === null || key === '') {
      throw new IdempotencyKeyError('the key is empty: nothing to identify the work by')
    }
    const unit: Unit = { key: storedKey(selection.namespace, key), attempt }
    if (selection.payload !== undefined) unit.payloadHash = hashOf(selection.payload(input, context))
    return unit
  } catch (error) {
    const message = `${label}: ${(error as Error)?.message ?? String(error)}`
    throw new IdempotencyKeyError(message, error instanceof IdempotencyError ? error.cause : error)
  }
}
