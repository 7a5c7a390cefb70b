import { IdempotencyConfigError } from './errors.js'

/**
 * Options that were renamed, by owner: the old name is refused with the new one. A caller still
 * passing the old name means the old option, which "unknown option" would not tell them.
 */
const RENAMED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  idempotency: {
    // 0.x: the middleware's store bound had the name of perRecord's bound on records.
    concurrency: "'maxStoreRequests' (the most store requests at once); " +
      'perRecord(fn, { concurrency }) bounds the records run at once'
  }
}

/**
 * Refuses an option no one reads: TypeScript catches a misspelt option, JavaScript would
 * silently run without it (a `onfailure: 'fail'` that never applies is a record run twice).
 */
export const refuseUnknownOptions = (owner: string, options: object, known: readonly string[]): void => {
  for (const name of Object.keys(options)) {
    if (known.includes(name) || (options as Record<string, unknown>)[name] === undefined) continue
    const renames = RENAMED[owner]
    // hasOwn: an option named like a property of every object (`constructor`) is no rename.
    if (renames !== undefined && Object.hasOwn(renames, name)) {
      throw new IdempotencyConfigError(`${owner}: option '${name}' is now ${renames[name]}`)
    }
    const nearest = closest(name, known)
    throw new IdempotencyConfigError(`${owner}: unknown option '${name}' ` +
      (nearest === undefined ? `(the options are ${known.join(', ')})` : `(did you mean '${nearest}'?)`))
  }
}

/** The known name nearest to `name` (case aside), if it is near enough to be a slip of the keyboard. */
export const closest = (name: string, known: readonly string[]): string | undefined => {
  let best: { name: string, distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (best === undefined || distance < best.distance) best = { name: candidate, distance }
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(best.name.length / 4)) ? best.name : undefined
}

/** Levenshtein distance: insertions, deletions and substitutions. */
const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1
      const deleted = (previous[j] as number) + 1
      const inserted = (current[j - 1] as number) + 1
      current[j] = Math.min(deleted, inserted, (previous[j - 1] as number) + substitution)
    }
    previous = current
  }
  return previous[b.length] as number
}

/** The options that are set: an option set to undefined is as good as absent (and takes its default). */
export const definedOptions = <T extends object>(options: T): Partial<T> =>
  Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>
