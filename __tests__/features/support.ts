import { storedKey } from '../../src/keys/selector.js'

export * from '../../src/index.js'

/** The stored key of a business key, to find its item in the table. */
export const storedKeyOf = (namespace: string, businessKey: string): string => storedKey(namespace, businessKey)
