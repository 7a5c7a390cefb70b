/**
 * Runs `task` over `items` with at most `limit` in flight, so a 10,000-record batch
 * neither opens 10,000 sockets nor holds 10,000 pending requests in memory.
 */
export const forEachBounded = async <T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> => {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      await task(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
