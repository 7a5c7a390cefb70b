/**
 * Runs `task` over `items` with at most `limit` in flight, so a 10,000-record batch
 * neither opens 10,000 sockets nor holds 10,000 pending requests in memory.
 */
export const forEachBounded = async <T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>
): Promise<void> => {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      await task(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

/**
 * At most `limit` tasks at once, the others waiting their turn in the order they came: the
 * store requests a batch makes from several places (each record's settlement, as its work
 * ends) stay within one bound.
 */
export class Bound {
  #free: number
  #waiting: Array<() => void> = []
  #head = 0

  constructor (limit: number) {
    this.#free = limit
  }

  /** Runs `task` once a place is free, telling `started` when it has one; gives the place back when `task` settles. */
  async run<T> (task: () => Promise<T>, started?: () => void): Promise<T> {
    if (this.#free > 0) this.#free--
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    started?.()
    try {
      return await task()
    } finally {
      this.#next()
    }
  }

  /** Hands the place to the first waiting task, or frees it. */
  #next (): void {
    const wake = this.#waiting[this.#head]
    if (wake === undefined) {
      this.#free++
      return
    }
    this.#waiting[this.#head++] = undefined as never
    // A long line is dropped once it has been served, not shifted one by one.
    if (this.#head === this.#waiting.length) {
      this.#waiting = []
      this.#head = 0
    }
    wake()
  }
}
