import middy6 from '@middy/core'
// Middy 7, installed under an alias (npm:@middy/core@7) so both majors run in one test run.
import middy7Module from 'middy-core-7'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'

const middy7 = middy7Module as unknown as typeof middy6

/** Every Middy major the package is tested against (5 is in the peer range but not installed here). */
export const middyVersions: Array<[string, typeof middy6]> = [['@middy/core 6', middy6], ['@middy/core 7', middy7]]

export { sqsPartialBatchFailure }
