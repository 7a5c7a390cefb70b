import { IdempotencyConfigError } from '../../errors.js'
import type { AttributeNames } from './types.js'

/**
 * Each attribute option is a non-empty string, and each attribute has one job: two options naming
 * one attribute (defaults included) make one write overwrite the other, e.g. a lease token stored
 * over the payload hash loses the fence and a redelivery runs again. Refused before any request,
 * naming the options in the order `names` holds them.
 */
export const refuseSharedAttributes = (names: AttributeNames): void => {
  const seen = new Map<string, string>()
  for (const [option, name] of Object.entries(names)) {
    if (name === undefined) continue
    if (typeof name !== 'string' || name === '') {
      throw new IdempotencyConfigError(`DynamoDBStore: ${option} must be a non-empty string`)
    }
    const first = seen.get(name)
    if (first !== undefined) {
      throw new IdempotencyConfigError(
        `DynamoDBStore: ${first} and ${option} both name attribute '${name}': give each its own attribute`)
    }
    seen.set(name, option)
  }
}
