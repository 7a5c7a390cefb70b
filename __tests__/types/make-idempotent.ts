/**
 * Type tests, compiled by `npm run typecheck` (never run): the function `makeIdempotent` returns has
 * `fn`'s parameters and result, and its `key` and `payload` functions get `fn`'s arguments.
 */
import type { Context } from 'aws-lambda'
import { makeIdempotent, MemoryStore } from '../../src/index.js'

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
/** Compiles only when `T` is `true`. */
const assertType = <T extends true>(): T | undefined => undefined

const store = new MemoryStore()

const charge = async (order: { id: string, cents: number }, context: Context): Promise<{ charged: number }> => ({ charged: order.cents + context.getRemainingTimeInMillis() })
export const chargeOnce = makeIdempotent(charge, {
  store,
  key: (order, _context) => { assertType<Equals<typeof _context, Context>>(); return order.id },
  payload: (order) => order.cents
})
assertType<Equals<Parameters<typeof chargeOnce>, [order: { id: string, cents: number }, context: Context]>>()
assertType<Equals<ReturnType<typeof chargeOnce>, Promise<{ charged: number }>>>()

// A synchronous function becomes an async one with the same result.
export const add = makeIdempotent((a: number, b: number) => a + b, { store, key: (a, b) => [a, b] })
assertType<Equals<ReturnType<typeof add>, Promise<number>>>()

// @ts-expect-error the wrapped function takes what fn takes
export const wrongArgument = chargeOnce('o-1', {} as Context)

// @ts-expect-error an order has no `customer`
export const wrongKey = makeIdempotent(charge, { store, key: (order) => order.customer })

// @ts-expect-error leaseSeconds is a number of seconds
export const wrongLease = makeIdempotent(charge, { store, leaseSeconds: '60' })
