/**
 * Seeded randomness for the chaos suite. Every random decision is drawn from a stream
 * named by what it decides (`fate/payment-17`, `fault/inv-3/claim/<key>`), derived from the
 * run's seed: a decision does not depend on how many other draws happened before it, so
 * replaying a seed replays the same misfortune even if something else changes the order.
 */
export interface Random {
  /** Uniform in [0, 1). */
  next: () => number
  /** True with probability `p`. */
  chance: (p: number) => boolean
  /** Integer in [min, max], both included. */
  int: (min: number, max: number) => number
  pick: <T>(items: readonly T[]) => T
  shuffle: <T>(items: readonly T[]) => T[]
}

/** mulberry32: tiny, fast, good enough to spread faults; not for cryptography. */
export const prng = (seed: number): Random => {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1))
  return {
    next,
    chance: (p) => next() < p,
    int,
    pick: (items) => items[int(0, items.length - 1)] as (typeof items)[number],
    shuffle: (items) => {
      const out = [...items]
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i)
        ;[out[i], out[j]] = [out[j] as (typeof out)[number], out[i] as (typeof out)[number]]
      }
      return out
    }
  }
}

/** FNV-1a over the labels: turns (seed, name) into the seed of an independent stream. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** The stream of decisions named `labels` in the run seeded with `seed`. */
export const streamFor = (seed: number, ...labels: Array<string | number>): Random => prng(hash(`${seed}/${labels.join('/')}`))
