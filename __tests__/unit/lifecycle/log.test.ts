import { afterEach, describe, expect, jest, test } from '@jest/globals'
import { Logger } from '@aws-lambda-powertools/logger'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import type { KinesisStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, perRecord, type IdempotencyOptions } from '../../../src/index.js'
import { defaultLogLevel } from '../../../src/lifecycle/log.js'
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
})
