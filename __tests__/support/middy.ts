import middy6 from '@middy/core'
// Middy 5 and 7, installed under aliases (npm:@middy/core@5, @7) so every major runs in one test run.
import middy5Module from 'middy-core-5'
import middy7Module from 'middy-core-7'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'

const middy5 = middy5Module as unknown as typeof middy6
const middy7 = middy7Module as unknown as typeof middy6

/** The Middy majors every behaviour is tested against. */
export const middyVersions: Array<[string, typeof middy6]> = [['@middy/core 6', middy6], ['@middy/core 7', middy7]]

/**
 * SQS batch mode also on Middy 5. (Whole-event mode on Middy 5 cannot replay an `undefined`
 * result — Middy 5 has no `earlyResponse` — as the README says.)
 */
export const batchMiddyVersions: Array<[string, typeof middy6]> = [['@middy/core 5', middy5], ...middyVersions]

export { sqsPartialBatchFailure }
