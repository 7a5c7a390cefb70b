import { errorMessage, errorName } from '../error-text.js'
import type { IdempotencyLogger, LogLevel, OutcomeKind, OutcomeReport } from '../types.js'
import {
  IdempotencyFailedError,
  IdempotencyHeldBackError,
  IdempotencyInProgressError,
  IdempotencyKeyError,
  IdempotencyPayloadMismatchError,
  IdempotencyStoreError
} from '../errors.js'

/** One line of our log: a message and its fields; errors as their name and message only. */
export interface LogEntry { message: string, [field: string]: unknown }

/** What the lifecycle logs through: a level each, filtered by the `logLevel` option. */
export interface Log {
  debug: (entry: LogEntry) => void
  info: (entry: LogEntry) => void
  warn: (entry: LogEntry) => void
  error: (entry: LogEntry) => void
  /** Whether an entry at `level` would be written: a report nobody reads need not be built. */
  writes: (level: Level) => boolean
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }
export type Level = Exclude<LogLevel, 'silent'>

export const isLogLevel = (value: unknown): value is LogLevel => typeof value === 'string' && value in RANK

/**
 * The level when the option is not given: Lambda's own application log level when the function
 * sets one (advanced logging controls:
 * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-advanced.html),
 * then Powertools', else `info`.
 */
export const defaultLogLevel = (env: Record<string, string | undefined> = process.env): LogLevel => {
  for (const name of ['AWS_LAMBDA_LOG_LEVEL', 'POWERTOOLS_LOG_LEVEL']) {
    const level = env[name]?.toLowerCase()
    if (level === 'trace') return 'debug'
    if (level === 'fatal' || level === 'critical') return 'error'
    if (isLogLevel(level)) return level
  }
  return 'info'
}

/**
 * Our log over the user's logger. `console` gets one JSON line per entry (CloudWatch shows it
 * as one event, and Logs Insights reads its fields); any other logger (a Powertools `Logger`)
 * gets the entry as an object, which it serialises with its own context. A logger without
 * `debug` or `info` drops those levels.
 */
export const createLog = (logger: IdempotencyLogger | false, level: LogLevel): Log => {
  const threshold = RANK[level]
  const writes = (at: Level): boolean => logger !== false && RANK[at] >= threshold
  const write = (at: Level) => (entry: LogEntry): void => {
    if (logger === false || !writes(at)) return
    const sink = logger[at]?.bind(logger)
    if (sink === undefined) return
    const line = serialisable(entry)
    sink(logger === console ? JSON.stringify({ level: at.toUpperCase(), ...line }) : line)
  }
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), writes }
}

/** Errors become `{ name, message }` (and `code` when they have one): never a stack, never a payload they carry. */
const serialisable = (entry: LogEntry): LogEntry => {
  const out: LogEntry = { message: entry.message }
  for (const [field, value] of Object.entries(entry)) {
    if (field === 'message' || value === undefined) continue
    out[field] = value instanceof Error || field === 'error' ? errorFields(value) : value
  }
  return out
}

export const errorFields = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error) }
  const code = (error as { code?: unknown }).code
  // An error without a message (node-redis's TimeoutError) is named by its class, never left blank.
  return { name: errorName(error), message: errorMessage(error), ...(typeof code === 'string' ? { code } : {}) }
}

/** A batch record's fate, in the lines of the outcomes that leave it to Lambda's retry. */
const RETRIED = 'reported failed, to be retried'

/** The level and words of each outcome: a line for every decision a person may need to find. */
const LINES: Record<OutcomeKind, [Level, string]> = {
  completed: ['debug', 'ran and completed'],
  replayed: ['debug', 'duplicate: replayed the stored result'],
  'in-batch-copy': ['debug', 'duplicate in the same batch: shares its first copy\'s result'],
  'in-progress': ['info', `in progress in another invocation: ${RETRIED}`],
  'held-back': ['info', 'held back, not run: released, to be retried in order'],
  failed: ['warn', 'failed'],
  'failed-before': ['warn', 'replayed a failure stored before: not run'],
  mismatch: ['warn', 'refused: the key was used before with another payload'],
  'no-key': ['warn', 'refused: no idempotency key could be taken'],
  'timed-out': ['warn', 'timed out: lease kept until it lapses, then retried'],
  'lease-lost': ['warn', 'lease lost: another invocation took the record over; nothing of ours was stored'],
  'store-error': ['error', 'store error: the record keeps its lease until it lapses']
}

/** The level an outcome of `kind` is logged at. */
export const levelOf = (kind: OutcomeKind): Level => LINES[kind][0]

/** The one line an outcome is logged as (each failure once: nothing else logs it). */
export const logOutcome = (log: Log, outcome: OutcomeReport): void => {
  const unclaimed = isUnclaimed(outcome)
  const [level, said] = unclaimed
    ? [LINES['store-error'][0], `store error: not run, its claim failed; ${RETRIED}`]
    : LINES[outcome.kind]
  // A whole event (no record id) is no batch record that Lambda retries: say what its caller got.
  const callerGot = unclaimed ? 'the caller got the error' : 'answered 409 (HTTP) or the error, not run'
  const words = outcome.id !== undefined ? said : said.replace(RETRIED, callerGot)
  const { kind, error, ...fields } = outcome
  log[level]({ message: `idempotency: ${words}`, outcome: kind, ...fields, ...(error === undefined ? {} : { error }) })
}

/**
 * A store error that kept the unit from being claimed: it has no lease to keep (one whose lost
 * answer landed lapses like any).
 */
const isUnclaimed = (outcome: OutcomeReport): boolean =>
  outcome.kind === 'store-error' && outcome.error instanceof IdempotencyStoreError &&
  (outcome.error.operation === 'claim' || outcome.error.operation === 'read')

/** The kind of outcome an error that kept a unit from running stands for. */
export const kindOfRefusal = (error: unknown): OutcomeKind => {
  if (error instanceof IdempotencyInProgressError) return 'in-progress'
  if (error instanceof IdempotencyFailedError) return 'failed-before'
  if (error instanceof IdempotencyPayloadMismatchError) return 'mismatch'
  if (error instanceof IdempotencyKeyError) return 'no-key'
  if (error instanceof IdempotencyHeldBackError) return 'held-back'
  if (error instanceof IdempotencyStoreError) return 'store-error'
  return 'failed'
}

/** Where outcomes go: the log, and the `onOutcome` option (a unit's lifecycle config is one). */
export interface Reporting { log: Log, onOutcome?: (outcome: OutcomeReport) => void }

/**
 * Whether an outcome of `kind` is read by anyone (the log at its level, or `onOutcome`): on a replayed
 * batch, mostly not.
 */
export const isReported = (config: Reporting, kind: OutcomeKind): boolean =>
  config.onOutcome !== undefined || config.log.writes(levelOf(kind))

/**
 * What became of a unit, once its fate is known: its one log line, then the `onOutcome` hook. A
 * hook that throws must not change what happens to the work, so it is only logged.
 */
export const reportOutcome = (config: Reporting, outcome: OutcomeReport): void => {
  logOutcome(config.log, outcome)
  if (config.onOutcome === undefined) return
  try {
    config.onOutcome(outcome)
  } catch (error) {
    config.log.error({ message: 'idempotency: onOutcome threw; ignored', error })
  }
}
