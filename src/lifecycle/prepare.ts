import { IdempotencyKeyError } from '../errors.js'
import type { Unit } from './config.js'
import { inspect } from 'node:util'
import { hashOf, isEmptySelection, storedKey, type Select } from './key.js'

/** The compiled `key` and `payload` options of one middleware. */
export interface Selection {
  namespace: string
  key: Select
  /** How the key is taken, for errors: `key path "body.orderId"`, `the key function`. */
  keyName: string
  payload?: Select
  /** The key is the source's default (not the `key` option): a source may scope it by its event. */
  defaultKey?: boolean
}

/**
 * Computes key and payload hash once, before the handler runs, so a handler that
 * mutates its input cannot change them. `label` names the unit in errors.
 * Throws `IdempotencyKeyError` naming the unit and what was wrong.
 */
export const prepareUnit = (selection: Selection, input: unknown, context: unknown, attempt: number, label: string): Unit => {
  /** Runs one step; any failure becomes an IdempotencyKeyError that names the unit. */
  const step = <T>(problem: string, run: () => T): T => {
    try {
      return run()
    } catch (error) {
      // The selectors already say what went wrong; anything else is a hashing problem.
      if (error instanceof IdempotencyKeyError) throw new IdempotencyKeyError(`${label}: ${error.message}`, error.cause, { clientError: error.expose, ...(error.problem === undefined ? {} : { detail: error.problem.detail }) })
      throw new IdempotencyKeyError(`${label}: ${problem}: ${(error as Error)?.message ?? String(error)}`, error, { clientError: false })
    }
  }
  const key = step('the key cannot be taken', () => selection.key(input, context))
  if (isEmptySelection(key)) {
    const found = key === undefined || key === null ? 'nothing' : inspect(key, { depth: 4, breakLength: Infinity })
    throw new IdempotencyKeyError(`${label}: the key is empty (${selection.keyName} found ${found}): nothing to identify the work by`)
  }
  const unit: Unit = { key: step(`the key from ${selection.keyName} cannot be hashed`, () => storedKey(selection.namespace, key)), attempt }
  const { payload } = selection
  if (payload !== undefined) unit.payloadHash = step('the payload cannot be hashed', () => hashOf(payload(input, context)))
  return unit
}
