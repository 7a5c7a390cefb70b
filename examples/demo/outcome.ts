import type { SQSBatchResponse, SQSRecord } from 'aws-lambda'
import { IdempotencyFailedError, IdempotencyInProgressError, IdempotencyPayloadMismatchError } from '../../src/index.js'
import type { Payment, Receipt } from '../sam-app/src/sqs-consumer.js'
import type { Observation } from './invocation.js'

export type Outcome = 'ran' | 'retried' | 'replayed' | 'conflict' | 'failed' | 'refused' | 'mismatch' | 'unexplained'

/** What became of one delivered record, and the facts that say so. */
export interface RecordReport {
  record: SQSRecord
  invocation: string
  paymentId: string
  outcome: Outcome
  detail: string
  /** Reported in `batchItemFailures`: SQS delivers it again (or moves it to the DLQ). */
  returnedToQueue: boolean
}

export interface Facts {
  response: SQSBatchResponse
  seen: Observation
  /** Receipts in the table's COMPLETED records, by payment id (their `responseData`). */
  storedReceipts: Map<string, Receipt>
  /** Payments whose charge failed in an earlier invocation. */
  failedBefore: ReadonlySet<string>
}

/**
 * Decides what happened to a record from what can be seen from outside the middleware:
 * whether the card gateway was called for its payment by this invocation, whether the
 * record is in `batchItemFailures`, why the loggers were told it failed, and the table.
 */
export const reportOf = (record: SQSRecord, { response, seen, storedReceipts, failedBefore }: Facts): RecordReport => {
  const { paymentId } = JSON.parse(record.body) as Payment
  const returnedToQueue = response.batchItemFailures.some((f) => f.itemIdentifier === record.messageId)
  const report = (outcome: Outcome, detail: string): RecordReport =>
    ({ record, invocation: seen.label, paymentId, outcome, detail, returnedToQueue })
  const charge = seen.charges.find((c) => c.paymentId === paymentId)

  if (charge !== undefined) {
    if (charge.error === undefined && !returnedToQueue) {
      return report(failedBefore.has(paymentId) ? 'retried' : 'ran', `charged ${charge.chargeId ?? ''}`)
    }
    if (charge.error !== undefined && returnedToQueue) return report('failed', `gateway: ${charge.error.message}`)
    const gateway = charge.error === undefined ? 'charged' : 'failed'
    return report('unexplained', `gateway ${gateway} but ${returnedToQueue ? '' : 'not '}reported failed`)
  }
  if (!returnedToQueue) {
    const receipt = storedReceipts.get(paymentId)
    return report('replayed', `done before (receipt ${receipt?.chargeId ?? 'not found'} on record), gateway not called`)
  }
  const reason = seen.reasons.get(record.messageId)
  if (reason instanceof IdempotencyInProgressError) {
    return report('conflict', 'being charged by another invocation right now')
  }
  if (reason instanceof IdempotencyFailedError) {
    return report('refused', `failed before, not run again (${reason.storedError.name})`)
  }
  if (reason instanceof IdempotencyPayloadMismatchError) {
    return report('mismatch', 'same payment id, different body: refused')
  }
  return report('unexplained', `reported failed: ${reason instanceof Error ? reason.message : String(reason)}`)
}
