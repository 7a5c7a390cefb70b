import type { StoredError } from '../../errors.js'
import type { ClaimRecord } from '../store.js'
import { takeoverCondition } from './claim-condition.js'
import { completionUpdate, failureUpdate, leaseFence } from './completion.js'
import { claimItem, keyItem, type Item } from './items.js'
import type { AttributeNames } from './types.js'

/*
 * The PartiQL statements of grouped writes (docs/stores.md: DynamoDBStore), one per call, each
 * with the fence of its single-item form. Conditions and updates are not spelt twice: they are
 * the single-item expressions (claim-condition.ts, completion.ts) translated, so that the two
 * forms cannot drift. Checked on DynamoDB Local: an INSERT of a key that exists fails alone with
 * DuplicateItem; an UPDATE of a missing key fails with ConditionalCheckFailed and no item; a
 * refused UPDATE returns the item with ReturnValuesOnConditionCheckFailure ALL_OLD; a DELETE of a
 * missing key succeeds, so a release asks for the deleted item (RETURNING ALL OLD *).
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ql-reference.delete.html
 */

/** One statement of a `BatchExecuteStatement` request. */
export interface Statement {
  Statement: string
  Parameters: Array<Item[string]>
  ReturnValuesOnConditionCheckFailure?: 'ALL_OLD'
}

/** A PartiQL identifier: double quotes, a double quote inside doubled. */
const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** A PartiQL string literal, for the attribute names of an INSERT's tuple. */
const literal = (name: string): string => `'${name.replaceAll("'", "''")}'`

/**
 * An expression of the item API in PartiQL: `#name` by its quoted attribute, `:value` by `?`, its value
 * appended to `parameters`.
 */
const translate = (
  expression: string,
  names: Record<string, string>,
  values: Item,
  parameters: Statement['Parameters']
): string =>
  expression.replace(/[#:][A-Za-z0-9_]+/g, (token) => {
    if (token.startsWith('#')) {
      const name = names[token]
      if (name === undefined) throw new Error(`no attribute name for ${token}`)
      return quoted(name)
    }
    const value = values[token]
    if (value === undefined) throw new Error(`no attribute value for ${token}`)
    parameters.push(value)
    return '?'
  })

/** `SET a = x, b = y REMOVE c, d` as PartiQL takes it: one keyword per action. */
const actions = (update: string): string =>
  update.replace(/\b(SET|REMOVE)\s+(.*?)(?=\s+(?:SET|REMOVE)\s|$)/g, (_, keyword: string, list: string) =>
    list.split(',').map((action) => `${keyword} ${action.trim()}`).join(' '))

type Expression = {
  ConditionExpression?: string
  UpdateExpression?: string
  ExpressionAttributeNames: Record<string, string>
  ExpressionAttributeValues: Item
}

/** The statements of one store's table and attribute names. */
export class Statements {
  readonly #table: string

  constructor (table: string, private readonly names: AttributeNames, private readonly sortKeyValue: string) {
    this.#table = quoted(table)
  }

  /** A claim of a new key: fails alone with DuplicateItem when the key exists. */
  insert (record: ClaimRecord): Statement {
    const item = claimItem(this.names, this.sortKeyValue, record)
    const attributes = Object.keys(item)
    const value = attributes.map((a) => `${literal(a)}: ?`).join(', ')
    return { Statement: `INSERT INTO ${this.#table} VALUE {${value}}`, Parameters: Object.values(item) }
  }

  /**
   * A claim of a key that exists: takes over an expired record or a lapsed lease, and writes
   * the whole claim (what the claim's PutItem replaces: a result, an error, an old hash are
   * removed). Refused, it returns the record in the way.
   */
  takeover (record: ClaimRecord, nowMs: number): Statement {
    const n = this.names
    const item = claimItem(n, this.sortKeyValue, record)
    const keyAttributes = new Set([n.keyAttr, n.sortKeyAttr])
    const set = Object.keys(item).filter((a) => !keyAttributes.has(a))
    const remove = [n.responseDataAttr, n.errorAttr, ...(record.payloadHash === undefined ? [n.payloadHashAttr] : [])]
    const parameters = set.map((a) => item[a] as Item[string])
    const update = [...set.map((a) => `SET ${quoted(a)} = ?`), ...remove.map((a) => `REMOVE ${quoted(a)}`)].join(' ')
    const where = this.#where(record.key, takeoverCondition(n, nowMs), parameters)
    return {
      Statement: `UPDATE ${this.#table} ${update} ${where}`,
      Parameters: parameters,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD'
    }
  }

  complete (key: string, leaseToken: string, outcome: { expiry: number, responseData?: string }): Statement {
    return this.#update(key, completionUpdate(this.names, outcome), leaseToken)
  }

  fail (key: string, leaseToken: string, outcome: { expiry: number, error: StoredError }): Statement {
    return this.#update(key, failureUpdate(this.names, outcome), leaseToken)
  }

  /**
   * Returns the deleted item, so that a key with no record (which PartiQL deletes without error) reads as
   * not released.
   */
  release (key: string, leaseToken: string): Statement {
    const parameters: Statement['Parameters'] = []
    const where = this.#where(key, leaseFence(this.names, leaseToken), parameters)
    return { Statement: `DELETE FROM ${this.#table} ${where} RETURNING ALL OLD *`, Parameters: parameters }
  }

  #update (key: string, update: Expression, leaseToken: string): Statement {
    const parameters: Statement['Parameters'] = []
    const set = translate(actions(update.UpdateExpression ?? ''), update.ExpressionAttributeNames,
      update.ExpressionAttributeValues, parameters)
    const where = this.#where(key, leaseFence(this.names, leaseToken), parameters)
    return { Statement: `UPDATE ${this.#table} ${set} ${where}`, Parameters: parameters }
  }

  /** WHERE the full key (PartiQL needs an equality on every key attribute) AND the condition. */
  #where (key: string, condition: Expression, parameters: Statement['Parameters']): string {
    const keyParts = Object.entries(keyItem(this.names, this.sortKeyValue, key)).map(([attribute, value]) => {
      parameters.push(value)
      return `${quoted(attribute)} = ?`
    })
    const fence = translate(condition.ConditionExpression ?? '', condition.ExpressionAttributeNames,
      condition.ExpressionAttributeValues, parameters)
    return `WHERE ${keyParts.join(' AND ')} AND (${fence})`
  }
}
