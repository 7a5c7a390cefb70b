import { IdempotencyStoreError, type StoreOperation } from '../errors.js'

/** How long a command waits for the store to answer, unless --timeout says otherwise. */
export const DEFAULT_TIMEOUT_SECONDS = 10

/**
 * Runs `work` until it settles, or until the store has said nothing for `ms`: then `abandon`
 * (which destroys the client: a request still waiting, or a socket still open, would keep the
 * process alive) and reject with a store error naming `where`. `work` calls `alive` whenever an
 * answer came (a page of a listing), so that a long listing that keeps answering is never cut.
 * A TCP connection can be accepted by an endpoint whose far end never answers (an SSM tunnel to
 * a stopped host): neither node-redis's connect nor the AWS SDK gives up on that by itself.
 */
export const answeredWithin = async <T>(
  ms: number,
  what: { operation: StoreOperation, where: string },
  abandon: () => void,
  work: (alive: () => void) => Promise<T>
): Promise<T> => {
  let timer: NodeJS.Timeout | undefined
  let alive = (): void => {}
  const gaveUp = new Promise<never>((_resolve, reject) => {
    const arm = (): void => {
      timer = setTimeout(() => {
        abandon()
        reject(new IdempotencyStoreError(what.operation,
          `no answer from ${what.where} within ${ms / 1000} s, so the command gave up ` +
          '(the endpoint accepted the connection but said nothing: a tunnel whose far end is down, ' +
          'a security group that drops replies?); ' +
          '--timeout SECONDS sets how long to wait'))
      }, ms)
    }
    arm()
    alive = () => { clearTimeout(timer); arm() }
  })
  try {
    return await Promise.race([work(() => { alive() }), gaveUp])
  } finally {
    clearTimeout(timer)
  }
}

/** The --timeout flag's value in milliseconds; undefined when it is not a positive number of seconds. */
export const timeoutMs = (text: string | undefined): number | undefined => {
  if (text === undefined) return DEFAULT_TIMEOUT_SECONDS * 1000
  const seconds = Number(text)
  return /^\d+(\.\d+)?$/.test(text.trim()) && seconds > 0 ? Math.ceil(seconds * 1000) : undefined
}
