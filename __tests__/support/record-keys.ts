import { storedKey } from '../../src/keys/selector.js'

/**
 * A stored key of the shape the middleware writes, `namespace#<sha256 in hex>`, for a record a
 * test seeds by name: the operator functions take only keys of that shape for ours.
 */
export const keyOf = (namespace: string, name: string): string => storedKey(namespace, name)
