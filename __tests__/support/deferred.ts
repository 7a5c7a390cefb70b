/** A promise and the functions that settle it: for tests that wait on an event, not on time. */
export const deferred = <T = void>() => {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
  return { promise, resolve, reject }
}

/**
 * `promise`, or a rejection naming `what` once `ms` have passed: a bound on a wait that must not
 * hang (a hang fails the test with its own message, not at Jest's timeout). Not a sleep: the
 * test goes on the moment `promise` settles.
 */
export const within = async <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const bound = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`${what} did not end within ${ms} ms`)) }, ms) })
  try {
    return await Promise.race([promise, bound])
  } finally {
    clearTimeout(timer)
  }
}
