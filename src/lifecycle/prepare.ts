import { IdempotencyError, IdempotencyKeyError } from '../errors.js'
import type { Unit } from './config.js'
import { hashOf, storedKey, type Select } from './key.js'

/** The compiled `key` and `payload` options of one middleware. */
export interface Selection {
  namespace: string
  key: Select
  /** How the key is taken, for errors: `key path "body.orderId"`, `the key function`. */
  keyName: string
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
      throw new IdempotencyKeyError(`the key is empty (${selection.keyName} found nothing): nothing to identify the work by`)
    }
    let stored: string
    try {
      stored = storedKey(selection.namespace, key)
    } catch (error) {
      throw new IdempotencyKeyError(`the key from ${selection.keyName} cannot be hashed: ${(error as Error).message}`, error)
    }
    const unit: Unit = { key: stored, attempt }
    if (selection.payload !== undefined) {
      try {
        unit.payloadHash = hashOf(selection.payload(input, context))
      } catch (error) {
        if (error instanceof IdempotencyError) throw error
        throw new IdempotencyKeyError(`the payload cannot be hashed: ${(error as Error).message}`, error)
      }
    }
    return unit
  } catch (error) {
    const message = `${label}: ${(error as Error)?.message ?? String(error)}`
    throw new IdempotencyKeyError(message, error instanceof IdempotencyError ? error.cause : error)
  }
}
