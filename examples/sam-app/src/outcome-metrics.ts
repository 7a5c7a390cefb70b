/**
 * CloudWatch metrics from `onOutcome`, with no SDK call and no agent: the Embedded Metric Format
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 * Lambda sends what a function prints to CloudWatch Logs, which turns each EMF line into metrics:
 * `Units` counts the records (or events) of each outcome, so duplicates (`replayed`,
 * `in-batch-copy`, `in-progress`) can be graphed against `completed`; `DurationMs` is how long
 * each took. One line per outcome kind per batch (or event), printed once the middleware has told
 * every outcome of it: a batch's outcomes are told together, in one go, when it is answered — also
 * when it is answered early, with nothing to run, which skips every Middy `after` hook (so a
 * middleware could not be the one to print).
 *
 * ```ts
 * export const handler = middy<SQSEvent>()
 *   .use(sqsPartialBatchFailure({ logger: () => {} }))
 *   .use(idempotency({ store, onOutcome: outcomeMetrics({ namespace: 'Orders', service: 'order-consumer' }) }))
 *   .handler(perRecord(chargeCard))
 * ```
 */
import type { OutcomeKind, OutcomeReport } from 'middy-idempotency'

/** EMF takes at most 100 values per metric in one document. */
const MAX_VALUES = 100

export interface OutcomeMetricsOptions {
  /** The CloudWatch namespace. */
  namespace: string
  /** A dimension, so that several functions can share the namespace. */
  service: string
  /** Where the lines go. [`console.log`] */
  print?: (line: string) => void
}

/** An `onOutcome` hook that prints the outcomes told together as EMF lines, right after. */
export const outcomeMetrics = ({
  namespace,
  service,
  print = (line) => { console.log(line) }
}: OutcomeMetricsOptions): (outcome: OutcomeReport) => void => {
  const seen = new Map<OutcomeKind, number[]>()

  const onOutcome = (outcome: OutcomeReport): void => {
    // The outcomes of one batch are told synchronously, one after the other: a microtask
    // queued with the first runs once the last has been told, before the invocation answers.
    if (seen.size === 0) queueMicrotask(flush)
    const durations = seen.get(outcome.kind) ?? []
    durations.push(outcome.durationMs ?? 0)
    seen.set(outcome.kind, durations)
  }

  const flush = (): void => {
    for (const [kind, durations] of seen) {
      for (let i = 0; i < durations.length; i += MAX_VALUES) {
        const slice = durations.slice(i, i + MAX_VALUES)
        print(JSON.stringify({
          _aws: {
            Timestamp: Date.now(),
            CloudWatchMetrics: [{
              Namespace: namespace,
              Dimensions: [['Service', 'Outcome']],
              Metrics: [{ Name: 'Units', Unit: 'Count' }, { Name: 'DurationMs', Unit: 'Milliseconds' }]
            }]
          },
          Service: service,
          Outcome: kind,
          Units: slice.length,
          DurationMs: slice
        }))
      }
    }
    seen.clear()
  }

  return onOutcome
}
