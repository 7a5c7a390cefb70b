import type { SQSRecord } from 'aws-lambda'

/**
 * The business function both implementations wrap: as cheap as possible, so that what
 * the benchmark measures is the idempotency layer, not the work. `runs` counts calls, so
 * the bench can check that a duplicate really did not run.
 */
export const workCounter = { runs: 0 }

export const work = async (record: SQSRecord): Promise<{ ok: true, id: string }> => {
  await Promise.resolve()
  workCounter.runs++
  return { ok: true, id: record.messageId }
}
