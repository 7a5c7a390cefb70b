import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda'
import type { IdempotencyLogger, IdempotencyStore, OutcomeReport } from '../../src/index.js'
import { createHandler } from '../sam-app/src/sqs-consumer.js'
import type { CardGateway } from './card-gateway.js'
import { currentObservation, observing, type Observation } from './invocation.js'
import { reportOf, type Outcome, type RecordReport } from './outcome.js'
import { table } from './print.js'
import { batch, lambdaContext } from './sqs-messages.js'
import { scanItems, storedReceipts } from './table-items.js'

/**
 * Why a record was reported failed comes from `onOutcome`, which tells every record's fate with
 * its error, also when no record of the batch could run and the handler and every `after` hook
 * (sqsPartialBatchFailure's logger among them) were skipped. What the middleware logs about
 * anything but one record (those are in the table already) is kept as a note. Both land in the
 * observation of the invocation they belong to.
 */
const note = (entry: unknown): void => {
  const { id, message } = (entry ?? {}) as { id?: string, message?: string }
  if (id === undefined) currentObservation()?.notes.push(message ?? String(entry))
}

const reason = (outcome: OutcomeReport): void => {
  // `id` is the record's itemIdentifier: for SQS, its messageId.
  if (outcome.id !== undefined && outcome.error !== undefined) {
    currentObservation()?.reasons.set(outcome.id, outcome.error)
  }
}

const observingLogger: IdempotencyLogger = { warn: note, error: note }

export interface Invocation { records: SQSRecord[], response: SQSBatchResponse, seen: Observation }

/**
 * Runs the example consumer the way Lambda would, one SQS batch per invocation, and
 * reports per record what happened, from facts seen outside the middleware.
 */
export class Harness {
  readonly reports: RecordReport[] = []
  readonly problems: string[] = []
  readonly #handler: ReturnType<typeof createHandler>
  readonly #failedBefore = new Set<string>()

  constructor (
    store: IdempotencyStore,
    readonly gateway: CardGateway,
    readonly client: DynamoDBClient,
    readonly tableName: string
  ) {
    this.#handler = createHandler({
      store,
      charge: gateway.charge,
      logFailedRecord: () => {},
      onOutcome: reason,
      logger: observingLogger
    })
  }

  /** Invokes the consumer with one batch; `label` names it when invocations overlap. */
  async invoke (records: SQSRecord[], label = ''): Promise<{ response: SQSBatchResponse, seen: Observation }> {
    const { result, seen } = await observing(label,
      async () => await this.#handler(batch(records), lambdaContext()) as SQSBatchResponse)
    return { response: result, seen }
  }

  /** Turns invocations into per-record reports, prints them, and checks them against what must happen. */
  async report (invocations: Invocation[], expected: Outcome[]): Promise<RecordReport[]> {
    const receipts = storedReceipts(await scanItems(this.client, this.tableName))
    const reports = invocations.flatMap(({ records, response, seen }) =>
      records.map((record) =>
        reportOf(record, { response, seen, storedReceipts: receipts, failedBefore: this.#failedBefore })))
    for (const r of reports) if (r.outcome === 'failed') this.#failedBefore.add(r.paymentId)
    this.reports.push(...reports)

    table(['message', 'payment', 'receive', 'outcome', 'what was seen', 'SQS'], reports.map((r) => [
      r.invocation === '' ? r.record.messageId : `${r.record.messageId} (${r.invocation})`,
      r.paymentId,
      r.record.attributes.ApproximateReceiveCount,
      r.outcome,
      r.detail,
      r.returnedToQueue ? 'retry' : 'done'
    ]))
    for (const { seen } of invocations) for (const line of seen.notes) console.log(`  log: ${line}`)

    const got = reports.map((r) => r.outcome)
    if ([...got].sort().join() !== [...expected].sort().join()) {
      this.problems.push(`expected ${expected.join(', ')} but saw ${got.join(', ')}`)
    }
    return reports
  }

  /** One batch, one invocation, reported. */
  async deliver (records: SQSRecord[], expected: Outcome[]): Promise<RecordReport[]> {
    const { response, seen } = await this.invoke(records)
    return await this.report([{ records, response, seen }], expected)
  }
}
