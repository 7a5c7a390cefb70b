import { errorMessage } from '../error-text.js'
import { IdempotencyError, IdempotencyStoreError, type StoredError, type StoreOperation } from '../errors.js'

// A stored error is bounded whatever the store's own limit: a FAILED record must always fit,
// or the write fails and the record stays IN_PROGRESS to run again, what 'fail' exists to prevent.
const MAX_NAME = 128
const MAX_MESSAGE = 1000

/**
 * Cut at a character boundary: a slice by UTF-16 unit can end on the first half of a surrogate
 * pair (an emoji), which no store keeps as it is (UTF-8 has no lone surrogate: DynamoDB and Redis
 * store U+FFFD instead), so the stored message would not be the one we cut.
 */
const cut = (text: string, max: number): string => {
  if (text.length <= max) return text
  let end = max - 40
  if (isHighSurrogate(text.charCodeAt(end - 1))) end--
  return `${text.slice(0, end)}… (truncated from ${text.length} characters)`
}

const isHighSurrogate = (code: number): boolean => code >= 0xD800 && code <= 0xDBFF

/** Name, code and message of an error, for a FAILED record (no stack: it may hold secrets and is large), bounded. */
export const toStoredError = (error: unknown): StoredError => {
  const name = error instanceof Error ? String(error.name) : 'Error'
  const message = error instanceof Error ? String(error.message) : typeof error === 'string' ? error : safeString(error)
  const code = (error as { code?: unknown } | null | undefined)?.code
  return {
    name: cut(name, MAX_NAME),
    message: cut(message, MAX_MESSAGE),
    ...(typeof code === 'string' ? { code: cut(code, MAX_NAME) } : {})
  }
}

const safeString = (value: unknown): string => {
  try { return JSON.stringify(value) ?? String(value) } catch { return String(value) }
}

/** An unexpected error from a store request, as an `IdempotencyStoreError` (ours pass through). */
export const asStoreError = (error: unknown, operation: StoreOperation, key: string): IdempotencyError =>
  error instanceof IdempotencyError
    ? error
    : new IdempotencyStoreError(operation, `${operation} of key ${key} failed: ${errorMessage(error)}`,
        { key, cause: error })
