import { IdempotencyConfigError } from '../../errors.js'
import type { AttributeNames } from './types.js'

/** The attribute options, in the order errors name them. */
const ATTRIBUTE_OPTIONS = ['keyAttr', 'sortKeyAttr', 'statusAttr', 'expiryAttr', 'inProgressExpiryAttr', 'leaseTokenAttr', 'payloadHashAttr', 'responseDataAttr', 'errorAttr'] as const satisfies ReadonlyArray<keyof AttributeNames>

/**
 * Each attribute has one job: two options naming one attribute (defaults included) make one
 * write overwrite the other, e.g. a lease token stored over the payload hash loses the fence and
 * a redelivery runs again. Refused before any request.
 */
export const refuseSharedAttributes = (names: AttributeNames): void => {
  const seen = new Map<string, string>()
  for (const option of ATTRIBUTE_OPTIONS) {
    const name = names[option]
    if (name === undefined) continue
    const first = seen.get(name)
    if (first !== undefined) throw new IdempotencyConfigError(`DynamoDBStore: ${first} and ${option} both name attribute '${name}': give each its own attribute`)
    seen.set(name, option)
  }
}
