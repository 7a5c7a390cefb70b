import type { AttributeNames } from './types.js'
import type { DynamoDBWire } from './wire.js'

/** What the operator functions (operator.ts) read of a store: its table as the store sees it. */
export interface TableAccess { client: DynamoDBWire, tableName: string, names: AttributeNames, sortKeyValue: string }

// Kept beside the store, not in it: the operator functions reach a store's client and attribute
// names without the store class carrying their code into every handler's bundle.
const tables = new WeakMap<object, TableAccess>()

export const registerTable = (store: object, access: TableAccess): void => { tables.set(store, access) }

export const tableAccessOf = (store: object): TableAccess | undefined => tables.get(store)
