/**
 * What marks a record as ours, for the operator functions. A table or a Redis database may hold
 * other records beside ours: docs/powertools.md shares one table with Powertools for AWS
 * Lambda's idempotency utility. Their COMPLETED records carry the same status word and, with
 * `--key-attr id --expiry-attr expiration`, the same key and expiry attributes as ours. So the
 * attributes alone cannot tell: the key's shape decides first. Ours is
 * `namespace#[tenant#]<sha256 in hex>` (keys/selector.ts: a namespace and a tenant never hold a
 * '#'). Powertools writes `<function name>[.<function>]#<digest in base64>`, an md5 by default
 * (its BasePersistenceLayer.generateHash), which is never 64 hex digits.
 */

const OUR_KEY = /^[^#]*#(?:[^#]*#)?[0-9a-f]{64}$/

// Powertools' digest in base64, padded: 22 characters and '==' for md5 (its default), '=' for sha256.
const POWERTOOLS_KEY = /^[^#]*#[A-Za-z0-9+/]{20,}={1,2}$/

// Status words of Powertools' records that ours never use.
const POWERTOOLS_STATUSES = ['INPROGRESS', 'EXPIRED']

/**
 * Whose a record that is not ours looks like, as words to append to why it is not ours ('' when no
 * one's in particular).
 */
export const lookalike = (key: string, status?: unknown): string =>
  POWERTOOLS_KEY.test(key) || (typeof status === 'string' && POWERTOOLS_STATUSES.includes(status))
    ? ' (it looks like a record of Powertools for AWS Lambda\'s idempotency utility: ' +
      'key <function name>#<base64 digest>)'
    : ''

/** Why `key` is not the key of one of our records, or undefined when it has our shape. */
export const keyProblem = (key: string): string | undefined => OUR_KEY.test(key)
  ? undefined
  : `its key is not of the shape namespace#[tenant#]<sha256 in hex>${lookalike(key)}`
