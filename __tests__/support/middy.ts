// Middy 7 is the dev dependency (@middy/*); Middy 6 and 5 are installed under aliases
// (npm:@middy/core@6, @5, and the 6.x middlewares) so every supported major runs in one test run.
import middy7 from '@middy/core'
import httpErrorHandler7 from '@middy/http-error-handler'
import httpJsonBodyParser7 from '@middy/http-json-body-parser'
import inputOutputLogger7 from '@middy/input-output-logger'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import warmup7 from '@middy/warmup'
import middy5Module from 'middy-core-5'
import middy6Module from 'middy-core-6'
import middy765Module from 'middy-core-7-6-5'
import httpErrorHandler6 from 'middy-http-error-handler-6'
import httpJsonBodyParser6 from 'middy-http-json-body-parser-6'
import inputOutputLogger6 from 'middy-input-output-logger-6'
import warmup6 from 'middy-warmup-6'

/** `middy()` of any major, typed as Middy 7's: the tests use what the three share. */
export type Middy = typeof middy7

export const middy6 = middy6Module as unknown as Middy
export const middy5 = middy5Module as unknown as Middy
/**
 * The last Middy 7 release that, like 5 and 6, hands every invocation of a process one shared
 * AbortController: per-invocation controllers came with @middy/core 7.6.6.
 */
export const middy7_6_5 = middy765Module as unknown as Middy
export { middy7 }

/**
 * The real Middy middlewares released with one major, for the stacks users build. Middy 5 is
 * given the 6.x ones (its own are not installed). `@middy/event-normalizer` and
 * `@middy/sqs-partial-batch-failure` have no 7.x release on npm: their 6.x serves every major.
 */
export interface MiddyMiddlewares {
  httpErrorHandler: typeof httpErrorHandler7
  httpJsonBodyParser: typeof httpJsonBodyParser7
  inputOutputLogger: typeof inputOutputLogger7
  warmup: typeof warmup7
}

const middlewares7: MiddyMiddlewares = { httpErrorHandler: httpErrorHandler7, httpJsonBodyParser: httpJsonBodyParser7, inputOutputLogger: inputOutputLogger7, warmup: warmup7 }
const middlewares6 = {
  httpErrorHandler: httpErrorHandler6,
  httpJsonBodyParser: httpJsonBodyParser6,
  inputOutputLogger: inputOutputLogger6,
  warmup: warmup6
} as unknown as MiddyMiddlewares

/** The Middy majors every behaviour is tested against, newest first, each with its middlewares. */
export const middyVersions: Array<[string, Middy, MiddyMiddlewares]> = [
  ['@middy/core 7', middy7, middlewares7],
  ['@middy/core 6', middy6, middlewares6]
]

/**
 * SQS batch mode also on Middy 5. (Whole-event mode on Middy 5 cannot replay an `undefined`
 * result — Middy 5 has no `earlyResponse` — as the README says.)
 */
export const batchMiddyVersions: Array<[string, Middy, MiddyMiddlewares]> = [...middyVersions, ['@middy/core 5', middy5, middlewares6]]

export { sqsPartialBatchFailure }
