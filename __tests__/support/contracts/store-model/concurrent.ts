import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import type { ClaimRecord, IdempotencyRecord } from '../../../../src/stores/store.js'
import { KEYS, OWNERS } from './commands.js'
import { modelClaim, modelRead, type ModelState } from './model.js'

/** One claim of a concurrent burst: which owner, which key, and its host's clock skew and lease. */
export interface BurstClaim { owner: number, keyIndex: number, skewMs: number, leaseMs: number, expiryS: number }

export const burst = fc.array(
  fc.record({
    owner: fc.integer({ min: 0, max: OWNERS - 1 }),
    keyIndex: fc.integer({ min: 0, max: KEYS - 1 }),
    skewMs: fc.integer({ min: -1500, max: 1500 }),
    leaseMs: fc.integer({ min: -500, max: 3000 }),
    expiryS: fc.integer({ min: -1, max: 3 })
  }),
  { minLength: 2, maxLength: 4 }
)

/** The claim records of a burst, each with a new token. */
export const burstRecords = (m: ModelState, prefix: string, claims: BurstClaim[]): Array<{ record: ClaimRecord, nowMs: number }> =>
  claims.map((c) => {
    const nowMs = m.now + c.skewMs
    return {
      nowMs,
      record: {
        key: m.keys[c.keyIndex] as string,
        status: 'IN_PROGRESS',
        expiry: Math.floor(nowMs / 1000) + c.expiryS,
        inProgressExpiry: nowMs + c.leaseMs,
        leaseToken: `${prefix}-burst-${m.issued++}`
      }
    }
  })

const permutations = <T>(items: T[]): T[][] =>
  items.length <= 1 ? [items] : items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]))

/**
 * Linearizability of claims: the answers of claims sent at once, and the state they leave,
 * must be those of the model applying the same claims one after another in *some* order.
 * Returns the order that explains them, or undefined.
 */
export const explainingOrder = (
  start: ModelState,
  claims: Array<{ record: ClaimRecord, nowMs: number }>,
  answers: Array<IdempotencyRecord | undefined>,
  finalState: Map<string, IdempotencyRecord>
): number[] | undefined => {
  for (const order of permutations(claims.map((_, i) => i))) {
    const m: ModelState = { ...start, records: new Map(start.records) }
    const expected: Array<IdempotencyRecord | undefined> = []
    for (const i of order) {
      const { record, nowMs } = claims[i] as { record: ClaimRecord, nowMs: number }
      expected[i] = modelClaim(m, record, nowMs)
    }
    if (isDeepStrictEqual(expected, answers) && isDeepStrictEqual(modelRead(m, m.keys), finalState)) return order
  }
  return undefined
}
