/**
 * "Timeout in a batch" (issue 7, item 4): a batch of 10 where one record's downstream call
 * hangs until Middy's early timeout fires before a real ~1 s deadline. The leases of both
 * implementations end with that deadline (each takes the remaining time as its in-progress
 * lease), so once it has passed the whole batch is delivered again, as SQS does when the
 * invocation failed or its answer was lost. Counted: records whose business logic ran again.
 * The hung record never finished, so running it again is right; the nine that finished
 * before the timeout must not run again.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { Context, SQSRecord } from 'aws-lambda'
import { setTimeout as sleep } from 'node:timers/promises'
import { localClientConfig } from '../../scripts/dynamodb-local.mjs'
import { createTimeoutConsumer, TIMEOUT_CONTENDERS, type TimeoutContender } from '../handlers/timeout-consumers.js'
import { lambdaContext, redelivered, roundOf } from './events.js'
import { fmt, table } from './report.js'
import { mean } from './stats.js'
import { createTableFor, dropTable } from './tables.js'

const BATCH = 10
const HUNG_INDEX = 4
/** The invocation's deadline, and Middy's `timeoutEarlyInMillis` before it. */
const DEADLINE_MS = 1000
const TIMEOUT_EARLY_MS = 400
/** How long each finished record's downstream call takes: all nine end well before the timeout. */
const CALL_MS = 20
/** Past the deadline, so every lease taken in the first invocation has lapsed. */
const LAPSE_MARGIN_MS = 100
/** Lets the hung run, released at the end, settle (fenced off) before its table is dropped. */
const SETTLE_MS = 300

interface TimeoutRound { firstAnswer: string, finishedReRun: number, hungReRun: number, redeliveryFailed: number }

/** Means over the rounds; the first answers as seen (identical in every round so far). */
export interface TimeoutRow extends TimeoutRound { contender: TimeoutContender, rounds: number }

/** A context whose remaining time follows a real deadline, as Lambda's does. */
const untilDeadline = (deadline: number): Context => ({ ...lambdaContext('bench-consumer'), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) })

const failures = (answer: unknown): number => ((answer as { batchItemFailures?: unknown[] } | undefined)?.batchItemFailures ?? []).length

const runRound = async (admin: DynamoDBClient, client: DynamoDBClient, contender: TimeoutContender): Promise<TimeoutRound> => {
  const tableName = await createTableFor(admin, contender === 'theirs' ? 'theirs' : 'ours')
  let releaseHung = (): void => {}
  const hung = new Promise<void>((resolve) => { releaseHung = resolve })
  try {
    const records = roundOf('all new', BATCH).timed.Records
    const hungId = (records[HUNG_INDEX] as SQSRecord).messageId
    const runs = new Map<string, number>()
    const work = async (record: SQSRecord): Promise<string> => {
      const run = (runs.get(record.messageId) ?? 0) + 1
      runs.set(record.messageId, run)
      if (record.messageId === hungId && run === 1) await hung
      else await sleep(CALL_MS)
      return `charged ${record.messageId}`
    }
    const invoke = createTimeoutConsumer(contender, { tableName, client, work, timeoutEarlyInMillis: TIMEOUT_EARLY_MS })
    const deadline = Date.now() + DEADLINE_MS
    const first = await invoke({ Records: records }, untilDeadline(deadline)).then(
      (answer) => `${failures(answer)} failed`,
      // The invocation failed: SQS makes the whole batch visible again.
      (error: unknown) => `error (${(error as Error).message.slice(0, 40)})`)
    await sleep(Math.max(0, deadline - Date.now()) + LAPSE_MARGIN_MS)
    const second = await invoke({ Records: records.map(redelivered) }, lambdaContext('bench-consumer'))
    const reRan = records.filter((r) => (runs.get(r.messageId) ?? 0) > 1).map((r) => r.messageId)
    return {
      firstAnswer: first,
      finishedReRun: reRan.filter((id) => id !== hungId).length,
      hungReRun: reRan.includes(hungId) ? 1 : 0,
      redeliveryFailed: failures(second)
    }
  } finally {
    releaseHung()
    await sleep(SETTLE_MS)
    await dropTable(admin, tableName)
  }
}

/** Every contender, `rounds` times, interleaved. */
export const timeoutInABatch = async (endpoint: string, rounds: number): Promise<TimeoutRow[]> => {
  const admin = new DynamoDBClient(localClientConfig(endpoint))
  const clients = new Map(TIMEOUT_CONTENDERS.map((c) => [c, new DynamoDBClient(localClientConfig(endpoint))]))
  const samples = new Map<TimeoutContender, TimeoutRound[]>(TIMEOUT_CONTENDERS.map((c) => [c, []]))
  try {
    for (let round = 0; round < rounds; round++) {
      for (const contender of TIMEOUT_CONTENDERS) samples.get(contender)?.push(await runRound(admin, clients.get(contender) as DynamoDBClient, contender))
    }
  } finally {
    admin.destroy()
    for (const client of clients.values()) client.destroy()
  }
  return TIMEOUT_CONTENDERS.map((contender) => {
    const s = samples.get(contender) ?? []
    return {
      contender,
      rounds: s.length,
      firstAnswer: [...new Set(s.map((x) => x.firstAnswer))].join('; '),
      finishedReRun: mean(s.map((x) => x.finishedReRun)),
      hungReRun: mean(s.map((x) => x.hungReRun)),
      redeliveryFailed: mean(s.map((x) => x.redeliveryFailed))
    }
  })
}

export const timeoutTable = (rows: TimeoutRow[]): string => table(
  ['handler', 'rounds', 'first invocation (timed out)', `finished records re-run on redelivery (of ${BATCH - 1})`, 'hung record re-run', 'failed on redelivery'],
  rows.map((r) => [r.contender, String(r.rounds), r.firstAnswer, fmt(r.finishedReRun, 1), fmt(r.hungReRun, 1), fmt(r.redeliveryFailed, 1)])
)

export const TIMEOUT_NOTE = `Batch of ${BATCH}; record ${HUNG_INDEX + 1}'s call hangs, the others take ${CALL_MS} ms. Middy \`timeoutEarlyInMillis: ${TIMEOUT_EARLY_MS}\`, ` +
  `context deadline ${DEADLINE_MS} ms away (real clock); both implementations take the remaining time as the in-progress lease. ` +
  `After the deadline + ${LAPSE_MARGIN_MS} ms the whole batch is redelivered (as when the invocation failed or its answer was lost). ` +
  '"ours per record": `perRecord`; "ours allSettled": `Promise.allSettled(event.Records.map(fn))`, completed in `after`; ' +
  '"theirs": Powertools `makeIdempotent` + `BatchProcessor` + `processPartialResponse` in the same Middy stack. ' +
  'The hung record re-running is expected (it never finished); a finished record re-running is a duplicate effect.'
