import { afterEach, describe, expect, jest, test } from '@jest/globals'
import { Logger } from '@aws-lambda-powertools/logger'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { KinesisStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, perRecord, type IdempotencyOptions } from '../../../src/index.js'
import { defaultLogLevel } from '../../../src/observe/log.js'
import { kinesisEvent, kinesisRecord } from '../../support/streams.js'
import { lambdaContext, sqsEvent, sqsRecord } from '../../support/sqs.js'

const SECRET = 'card-4111111111111111'

/** An SQS consumer on perRecord whose function fails for the bodies in `failing`. */
const consumer = (options: Partial<IdempotencyOptions>, failing: string[] = []) => middy<SQSEvent>()
  .use(idempotency({ store: new MemoryStore(), namespace: 'logs', ...options }))
  .handler(perRecord(async (record: SQSRecord) => {
    const body = JSON.parse(record.body) as { orderId: string }
    if (failing.includes(body.orderId)) throw new TypeError(`declined ${body.orderId}`)
    return 'ok'
  }))

/** Captures what `console` is given, level by level. */
const capturingConsole = () => {
  const lines: Array<{ level: string, line: unknown }> = []
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    jest.spyOn(console, level).mockImplementation((line: unknown) => { lines.push({ level, line }) })
  }
  return lines
}

afterEach(() => { jest.restoreAllMocks() })

describe('logs a person can use', () => {
  test('console gets one JSON line per failed record, with key, id, outcome and the error\'s name and message, never the payload', async () => {
    const lines = capturingConsole()
    const records = [sqsRecord({ orderId: 'o-1', card: SECRET }), sqsRecord({ orderId: 'o-2', card: SECRET })]
    await consumer({}, ['o-2'])(sqsEvent(records), lambdaContext())
    expect(lines).toHaveLength(1)
    const [{ level, line }] = lines as [{ level: string, line: string }]
    expect(level).toBe('warn')
    expect(typeof line).toBe('string')
    expect(line).not.toContain('\n')
    expect(line).not.toContain(SECRET)
    expect(JSON.parse(line)).toEqual({
      level: 'WARN',
      message: 'idempotency: failed',
      outcome: 'failed',
      onFailure: 'delete',
      key: expect.stringMatching(/^logs#/),
      id: records[1]?.messageId,
      messageId: records[1]?.messageId,
      durationMs: expect.any(Number),
      error: { name: 'TypeError', message: 'declined o-2' }
    })
  })

  test('in the README\'s SQS stack (sqsPartialBatchFailure with its logger off) a failure is logged once, and its body never', async () => {
    const lines = capturingConsole()
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: false as never }))
      .use(idempotency({ store: new MemoryStore(), namespace: 'logs' }))
      .handler(perRecord(async () => { throw new Error('declined') }))
    const record = sqsRecord({ orderId: 'o-3', card: SECRET })
    expect(await handler(sqsEvent([record]), lambdaContext())).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] })
    expect(lines).toHaveLength(1)
    expect(JSON.stringify(lines)).not.toContain(SECRET)
  })

  test('a Kinesis record whose function failed leaves its line too', async () => {
    const lines = capturingConsole()
    const handler = middy<KinesisStreamEvent>()
      .use(idempotency({ store: new MemoryStore(), namespace: 'logs' }))
      .handler(perRecord(async () => { throw new Error('downstream 503') }))
    const record = kinesisRecord({ paymentId: 'p-1' })
    await handler(kinesisEvent([record]), lambdaContext())
    expect(lines.map(({ level, line }) => [level, JSON.parse(line as string)])).toEqual([
      ['warn', expect.objectContaining({ outcome: 'failed', id: record.kinesis.sequenceNumber, error: { name: 'Error', message: 'downstream 503' } })]
    ])
  })

  test('logLevel decides which decisions are logged: debug adds completions, error keeps store faults only', async () => {
    const debug = capturingConsole()
    await consumer({ logLevel: 'debug' }, ['o-2'])(sqsEvent([sqsRecord({ orderId: 'o-1' }), sqsRecord({ orderId: 'o-2' })]), lambdaContext())
    expect(debug.map((l) => (JSON.parse(l.line as string) as { outcome: string }).outcome)).toEqual(['completed', 'failed'])
    jest.restoreAllMocks()
    const quiet = capturingConsole()
    await consumer({ logLevel: 'error' }, ['o-2'])(sqsEvent([sqsRecord({ orderId: 'o-2' })]), lambdaContext())
    expect(quiet).toEqual([])
  })

  test('the level follows Lambda\'s own application log level, then Powertools\', else info', () => {
    expect(defaultLogLevel({ AWS_LAMBDA_LOG_LEVEL: 'WARN', POWERTOOLS_LOG_LEVEL: 'DEBUG' })).toBe('warn')
    expect(defaultLogLevel({ POWERTOOLS_LOG_LEVEL: 'DEBUG' })).toBe('debug')
    expect(defaultLogLevel({ AWS_LAMBDA_LOG_LEVEL: 'TRACE' })).toBe('debug')
    expect(defaultLogLevel({ AWS_LAMBDA_LOG_LEVEL: 'FATAL' })).toBe('error')
    expect(defaultLogLevel({})).toBe('info')
  })

  test('a Powertools Logger gets each entry as fields of its own structured line', async () => {
    const written: string[] = []
    // Its console writes warnings to stderr, as Node's does.
    for (const stream of [process.stdout, process.stderr]) jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => { written.push(String(chunk)); return true })
    const logger = new Logger({ serviceName: 'orders' })
    const records = [sqsRecord({ orderId: 'o-9', card: SECRET })]
    await consumer({ logger }, ['o-9'])(sqsEvent(records), lambdaContext())
    jest.restoreAllMocks()
    const entries = written.join('').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(entries).toEqual([expect.objectContaining({
      level: 'WARN', service: 'orders', message: 'idempotency: failed', outcome: 'failed', id: records[0]?.messageId,
      error: { name: 'TypeError', message: 'declined o-9' }
    })])
    expect(JSON.stringify(entries)).not.toContain(SECRET)
  })

  test('logger: false is silent', async () => {
    const lines = capturingConsole()
    await consumer({ logger: false }, ['o-1'])(sqsEvent([sqsRecord({ orderId: 'o-1' })]), lambdaContext())
    expect(lines).toEqual([])
  })

  test('a claim that fails logs that the record was not run, never that it keeps a lease it never had; a completion that fails, that it keeps its lease', async () => {
    const refusing = new MemoryStore()
    refusing.claim = async () => { throw Object.assign(new Error('connection reset'), { name: 'TimeoutError' }) }
    const lines = capturingConsole()
    await middy<SQSEvent>()
      .use(idempotency({ store: refusing, namespace: 'logs' }))
      .handler(perRecord(async () => 'ok'))(sqsEvent([sqsRecord({ orderId: 'o-3' })]), lambdaContext())
    expect(lines.map((l) => (JSON.parse(l.line as string) as { message: string, outcome: string }))).toEqual([
      expect.objectContaining({ message: 'idempotency: store error: not run, its claim failed; reported failed, to be retried', outcome: 'store-error' })
    ])
    jest.restoreAllMocks()

    const unsettled = new MemoryStore()
    unsettled.complete = async () => { throw Object.assign(new Error('connection reset'), { name: 'TimeoutError' }) }
    const after = capturingConsole()
    await middy<SQSEvent>()
      .use(idempotency({ store: unsettled, namespace: 'logs' }))
      .handler(perRecord(async () => 'ok'))(sqsEvent([sqsRecord({ orderId: 'o-4' })]), lambdaContext())
    expect(after.map((l) => (JSON.parse(l.line as string) as { message: string }).message)).toEqual(['idempotency: store error: the record keeps its lease until it lapses'])
  })

  test('every log line\'s outcome is the kind onOutcome is told, and docs/observability.md lists each under the level it is logged at', async () => {
    const { levelOf } = await import('../../../src/observe/log.js')
    const { readFileSync } = await import('node:fs')
    const { tableAfter } = await import('../docs/markdown.js')
    const told: Array<{ kind: string, id?: string }> = []
    const lines = capturingConsole()
    const store = new MemoryStore()
    const handler = consumer({ store, logLevel: 'debug', onOutcome: ({ kind, id }) => { told.push({ kind, ...(id === undefined ? {} : { id }) }) } }, ['o-6'])
    const records = [sqsRecord({ orderId: 'o-5' }), sqsRecord({ orderId: 'o-6' })]
    await handler(sqsEvent(records), lambdaContext())
    await handler(sqsEvent([{ ...records[0] as SQSRecord, receiptHandle: 'again' }]), lambdaContext())
    const logged = lines.map((l) => JSON.parse(l.line as string) as { outcome: string, id?: string })
    expect(logged.map(({ outcome, id }) => ({ kind: outcome, id }))).toEqual(told)
    expect(told.map((t) => t.kind)).toEqual(['completed', 'failed', 'replayed'])

    // The Logs table: each level's row names, in backticks, the outcomes logged at it.
    const rows = tableAfter(readFileSync('docs/observability.md', 'utf8'), '## Logs: `logger` and `logLevel`')
    const documented = Object.fromEntries(rows.map(([level = '', outcomes = '']) => [level.replace(/`/g, ''), [...outcomes.matchAll(/`([a-z-]+)`/g)].map((m) => m[1])]))
    const kinds = ['completed', 'failed', 'lease-lost', 'replayed', 'in-batch-copy', 'in-progress', 'failed-before', 'mismatch', 'no-key', 'held-back', 'store-error', 'timed-out'] as const
    for (const kind of kinds) expect([kind, documented[levelOf(kind)]?.includes(kind)]).toEqual([kind, true])
  })
})
