import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import {
  BatchExecuteStatementCommand,
  BatchGetItemCommand,
  DeleteItemCommand,
  DynamoDBServiceException,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type BatchExecuteStatementCommandInput,
  type PutItemCommandInput
} from '@aws-sdk/client-dynamodb'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { mockClient } from 'aws-sdk-client-mock'
import { createIdempotencyTable } from '../../scripts/dynamodb-local.mjs'
import { idempotency, IdempotencyConfigError, IdempotencyHeldBackError, IdempotencyKeyError, IdempotencyResponseError, IdempotencyStoreError, MemoryStore, type IdempotencyOptions, type IdempotencyStore, type OutcomeReport } from '../../src/index.js'
import { DynamoDBStore } from '../../src/dynamodb.js'
import { storedKey } from '../../src/keys/selector.js'
import { freshTable, localClient } from '../support/dynamodb.js'
import { middyVersions, sqsPartialBatchFailure } from '../support/middy.js'
import { failedIds, lambdaContext, redelivered, sqsEvent, sqsRecord } from '../support/sqs.js'

/**
 * The bad-input catalogue (DESIGN §5): each bad input gives a clear error on the record
 * concerned (its class, and a message naming what was wrong), loses nothing (the
 * neighbours in the batch run and complete) and locks nothing (no IN_PROGRESS item is
 * left for the bad record). Real Middy, `sqsPartialBatchFailure` then `idempotency`, on
 * DynamoDB Local.
 */

type Table = Awaited<ReturnType<typeof freshTable>>
type Work = (record: SQSRecord) => Promise<unknown>

const ok: Work = async (record) => `done ${record.messageId}`

/** `ok` for every record but one, whose result is `result`. */
const answering = (bad: SQSRecord, result: () => unknown): Work => async (record) =>
  record.messageId === bad.messageId ? result() : await ok(record)

describe.each(middyVersions)('bad input, %s', (_, middy) => {
  let table: Table
  beforeAll(async () => { table = await freshTable() }, 30_000)
  afterAll(async () => { await table.drop() })

  /**
   * The README's consumer. Every reason a record is reported failed for is kept by
   * messageId: `sqsPartialBatchFailure` logs them when the handler ran; when no record
   * could run, the middleware answers early and `onOutcome` tells them. The log keeps each
   * error's name and message only.
   */
  const consumer = (options: Partial<IdempotencyOptions> = {}, work: Work = ok) => {
    const namespace = `bad-${Math.random().toString(36).slice(2, 10)}`
    const reasons = new Map<string, unknown>()
    const logged: unknown[] = []
    const keep = (entry: unknown): void => { logged.push(entry) }
    const onOutcome = ({ id, error }: OutcomeReport): void => { if (id !== undefined && error !== undefined) reasons.set(id, error) }
    const ran: string[] = []
    const handler = middy<SQSEvent>()
      .use(sqsPartialBatchFailure({ logger: (reason, record: SQSRecord) => { reasons.set(record.messageId, reason) } }))
      .use(idempotency({ store: table.store, namespace, logger: { warn: keep, error: keep }, onOutcome, ...options }))
      .handler(async (event) => await Promise.allSettled(event.Records.map(async (record) => {
        ran.push(record.messageId)
        return await work(record)
      })))
    return {
      handler,
      namespace,
      reasons,
      logged,
      ran,
      invoke: async (records: SQSRecord[]) => await handler(sqsEvent(records), lambdaContext()),
      items: async () => (await table.items()).filter((item) => String(item.idempotencyKey).startsWith(`${namespace}#`))
    }
  }

  /**
   * The common promise: only `bad` is reported failed, with an error of `errorClass`
   * whose message matches `message`; every neighbour ran once and is COMPLETED with its
   * response; and no record of this consumer is left IN_PROGRESS.
   */
  const expectOnlyBadFailed = async (
    run: ReturnType<typeof consumer>, records: SQSRecord[], bad: SQSRecord,
    errorClass: new (...args: never[]) => Error, message: RegExp
  ): Promise<Error> => {
    const response = await run.invoke(records)
    expect(failedIds(response)).toEqual([bad.messageId])
    const reason = run.reasons.get(bad.messageId) as Error
    expect(reason).toBeInstanceOf(errorClass)
    expect(reason.message).toMatch(message)
    const neighbours = records.filter((r) => r !== bad)
    expect(run.ran.filter((id) => id !== bad.messageId)).toEqual(neighbours.map((r) => r.messageId))
    const items = await run.items()
    expect(items.filter((i) => i.status === 'IN_PROGRESS')).toEqual([])
    const completed = items.filter((i) => i.status === 'COMPLETED').map((i) => JSON.parse(String(i.responseData)))
    expect(completed.sort()).toEqual(neighbours.map((r) => `done ${r.messageId}`).sort())
    return reason
  }

  /** A batch with the bad record in the middle, so that both its neighbours matter. */
  const batchAround = (bad: SQSRecord): SQSRecord[] => [sqsRecord({ orderId: 'o-before' }), bad, sqsRecord({ orderId: 'o-after' })]

  describe('keys', () => {
    test('a body that is not JSON, when the key path reads into it, fails that record with IdempotencyKeyError', async () => {
      const bad = sqsRecord('orderId=42, not JSON')
      const run = consumer({ key: 'body.orderId' })
      const reason = await expectOnlyBadFailed(run, batchAround(bad), bad, IdempotencyKeyError, /body\.orderId.*not JSON/)
      expect(reason.message).toContain(bad.messageId)
      expect(run.ran).not.toContain(bad.messageId)
    })

    test('a record without the key fails with IdempotencyKeyError and is never run unprotected', async () => {
      const bad = sqsRecord({ amount: 3 })
      const run = consumer({ key: 'body.orderId' })
      const reason = await expectOnlyBadFailed(run, batchAround(bad), bad, IdempotencyKeyError, /key is empty \(key path "body.orderId" found nothing\)/)
      expect(reason.message).toContain(bad.messageId)
      expect(run.ran).not.toContain(bad.messageId)
    })

    test('records whose key function selects { orderId: undefined } fail one by one instead of sharing one key (payload: false)', async () => {
      // Hashed, `{ orderId: undefined }` is `{}`: every record without an orderId would share one
      // key, and with no payload check a second one would be acknowledged as a replay without running.
      const run = consumer({ payload: false, key: (r: SQSRecord) => ({ orderId: (JSON.parse(r.body) as { orderId?: string }).orderId }) })
      const first = sqsRecord({ amount: 1 })
      await expectOnlyBadFailed(run, batchAround(first), first, IdempotencyKeyError, /key is empty \(the key function found \{ orderId: undefined \}\)/)
      const second = sqsRecord({ amount: 2 })
      expect(failedIds(await run.invoke([second]))).toEqual([second.messageId])
      expect(run.reasons.get(second.messageId)).toBeInstanceOf(IdempotencyKeyError)
      expect(run.ran).not.toContain(first.messageId)
      expect(run.ran).not.toContain(second.messageId)
    })

    test('a key function that throws fails that record with IdempotencyKeyError carrying the thrown error', async () => {
      const bad = sqsRecord({ tenant: null })
      const thrown = new Error('no tenant on this message')
      const run = consumer({
        key: (record: SQSRecord) => {
          const { tenant, orderId } = JSON.parse(record.body) as { tenant?: string | null, orderId?: string }
          if (tenant === null) throw thrown
          return orderId
        }
      })
      const reason = await expectOnlyBadFailed(run, batchAround(bad), bad, IdempotencyKeyError, /key function threw: no tenant on this message/)
      expect(reason.cause).toBe(thrown)
      expect(run.ran).not.toContain(bad.messageId)
    })
  })

  describe('keys that are not plain data', () => {
    test('an async key function fails each record with IdempotencyKeyError instead of putting every record on one key', async () => {
      const run = consumer({ key: async (r: SQSRecord) => (JSON.parse(r.body) as { orderId: string }).orderId })
      const records = [sqsRecord({ orderId: 'o-1' }), sqsRecord({ orderId: 'o-2' })]
      expect(failedIds(await run.invoke(records))).toEqual(records.map((r) => r.messageId))
      for (const record of records) {
        const reason = run.reasons.get(record.messageId) as Error
        expect(reason).toBeInstanceOf(IdempotencyKeyError)
        expect(reason.message).toMatch(/Promise: key and payload functions must be synchronous/)
      }
      expect(run.ran).toEqual([])
      expect(await run.items()).toEqual([])
    })

    test('a key function returning a Map is hashed by its entries, never as {}: two records with different Maps are two keys', async () => {
      const run = consumer({ payload: false, key: (r: SQSRecord) => new Map([['id', (JSON.parse(r.body) as { orderId: string }).orderId]]) })
      const first = sqsRecord({ orderId: 'o-map-1' })
      const second = sqsRecord({ orderId: 'o-map-2' })
      await run.invoke([first])
      expect(await run.invoke([second])).toEqual({ batchItemFailures: [] })
      expect(run.ran).toEqual([first.messageId, second.messageId])
    })

    test('a key function returning an instance of a class without toJSON fails that record instead of hashing it as {}', async () => {
      const bad = sqsRecord({ orderId: 'o-class' })
      const run = consumer({ key: (r: SQSRecord) => r === bad ? new (class OrderRef { id = 1 })() : r.messageId })
      await expectOnlyBadFailed(run, batchAround(bad), bad, IdempotencyKeyError, /instance of OrderRef, not plain data/)
    })

    test('a key function returning a Date gives distinct records distinct keys (none is replayed unrun)', async () => {
      const run = consumer({ payload: false, key: (r: SQSRecord) => new Date((JSON.parse(r.body) as { at: number }).at) })
      const first = sqsRecord({ at: 1_700_000_000_000 })
      const second = sqsRecord({ at: 1_700_000_060_000 })
      await run.invoke([first])
      expect(await run.invoke([second])).toEqual({ batchItemFailures: [] })
      expect(run.ran).toEqual([first.messageId, second.messageId])
    })
  })

  test('in a FIFO batch, a record without a key holds back only the rest of its message group', async () => {
    const run = consumer({ key: 'body.orderId' })
    const first = sqsRecord({ orderId: 'f-1' }, { groupId: 'g-a' })
    const bad = sqsRecord({ amount: 1 }, { groupId: 'g-a' })
    const later = sqsRecord({ orderId: 'f-3' }, { groupId: 'g-a' })
    const otherGroup = sqsRecord({ orderId: 'f-4' }, { groupId: 'g-b' })
    const response = await run.invoke([first, bad, later, otherGroup])
    // The later record of the bad record's group waits for it (order is kept); nothing else does.
    expect(failedIds(response)).toEqual([bad.messageId, later.messageId])
    expect(run.reasons.get(bad.messageId)).toBeInstanceOf(IdempotencyKeyError)
    expect(run.reasons.get(later.messageId)).toBeInstanceOf(IdempotencyHeldBackError)
    expect(run.ran).toEqual([first.messageId, otherGroup.messageId])
    const items = await run.items()
    expect(items.map((i) => i.status)).toEqual(['COMPLETED', 'COMPLETED'])
  })

  describe('responses that cannot be stored', () => {
    /** The work happened, so the record is kept as FAILED (never re-run) with the response error. */
    const expectStoredAsFailed = async (run: ReturnType<typeof consumer>): Promise<void> => {
      const failed = (await run.items()).filter((i) => i.status === 'FAILED')
      expect(failed).toHaveLength(1)
      expect(failed[0]?.error).toEqual({ name: { S: 'IdempotencyResponseError' }, message: { S: expect.stringContaining('cannot be stored') } })
    }

    test('a response over the 400 KB item limit fails that record with IdempotencyResponseError', async () => {
      const bad = sqsRecord({ orderId: 'o-big' })
      const run = consumer({}, answering(bad, () => 'x'.repeat(410 * 1024)))
      await expectOnlyBadFailed(run, batchAround(bad), bad, IdempotencyResponseError, /bytes of JSON, more than the \d+ the store keeps/)
      await expectStoredAsFailed(run)
    })

    test('the largest response the limit accepts does fit in a DynamoDB item', async () => {
      const largest = 'x'.repeat(table.store.limits.maxResponseBytes - 2) // its JSON adds two quotes
      const record = sqsRecord({ orderId: 'o-largest' })
      const run = consumer({}, async () => largest)
      expect(await run.invoke([record])).toEqual({ batchItemFailures: [] })
      const items = await run.items()
      expect(items.map((i) => i.status)).toEqual(['COMPLETED'])
      expect(JSON.parse(String(items[0]?.responseData))).toBe(largest)
    })

    test('a BigInt in the response fails that record with IdempotencyResponseError naming where it is', async () => {
      const bad = sqsRecord({ orderId: 'o-bigint' })
      const run = consumer({}, answering(bad, () => ({ charged: { amount: 10n } })))
      await expectOnlyBadFailed(run, batchAround(bad), bad, IdempotencyResponseError, /\$\.charged\.amount is a BigInt/)
      await expectStoredAsFailed(run)
    })

    test('a circular response fails that record with IdempotencyResponseError naming the cycle', async () => {
      const bad = sqsRecord({ orderId: 'o-cycle' })
      const cyclic: Record<string, unknown> = { id: 1 }
      cyclic.self = cyclic
      const run = consumer({}, answering(bad, () => cyclic))
      await expectOnlyBadFailed(run, batchAround(bad), bad, IdempotencyResponseError, /\$\.self is a circular reference/)
      await expectStoredAsFailed(run)
    })

    test('a Date and a class instance in the response are stored as what JSON.stringify produces; the record completes and a redelivery replays it', async () => {
      // Issue 8 #4: refusing them kept work that had succeeded FAILED, on its way to the DLQ.
      class Receipt { constructor (readonly id: string) {} }
      const record = sqsRecord({ orderId: 'o-date' })
      const run = consumer({}, async () => ({ chargedAt: new Date(0), receipt: new Receipt('r-1') }))
      expect(await run.invoke([record])).toEqual({ batchItemFailures: [] })
      const items = await run.items()
      expect(items.map((i) => [i.status, i.responseData])).toEqual([['COMPLETED', '{"chargedAt":"1970-01-01T00:00:00.000Z","receipt":{"id":"r-1"}}']])
      expect(await run.invoke([redelivered(record)])).toEqual({ batchItemFailures: [] })
      expect(run.ran).toEqual([record.messageId])
    })
  })

  describe('events', () => {
    const eventBridge = { 'detail-type': 'OrderPlaced', source: 'shop', detail: { orderId: 'o-1' } } as unknown as SQSEvent

    test("an event that is not SQS, in mode 'sqs', is refused with IdempotencyConfigError before anything runs", async () => {
      const ran: unknown[] = []
      const handler = middy<SQSEvent>()
        .use(idempotency({ store: table.store, mode: 'sqs', logger: false }))
        .handler(async (event) => { ran.push(event); return [] })
      const refusal = handler(eventBridge, lambdaContext())
      await expect(refusal).rejects.toThrow(IdempotencyConfigError)
      await expect(refusal).rejects.toThrow(/mode 'sqs' expects an SQS event/)
      expect(ran).toEqual([])
    })

    test("another source's batch in a forced mode is refused naming both, not taken for malformed records", async () => {
      const { kinesisEvent, kinesisRecord } = await import('../support/streams.js')
      const ran: unknown[] = []
      const handler = middy<SQSEvent>()
        .use(idempotency({ store: table.store, mode: 'sqs', logger: false }))
        .handler(async (event) => { ran.push(event); return [] })
      const refusal = handler(kinesisEvent([kinesisRecord({ n: 1 })]) as unknown as SQSEvent, lambdaContext())
      await expect(refusal).rejects.toThrow(new IdempotencyConfigError(
        "idempotency: mode 'sqs' expects an SQS event (a Records array of aws:sqs records), not a Kinesis event"))
      expect(ran).toEqual([])
    })

    test("an event that is not SQS, in mode 'sqs', behind sqsPartialBatchFailure runs nothing, writes nothing, and is logged and thrown", async () => {
      // That middleware's onError would turn an event without Records into an empty batchItemFailures: acknowledged unrun.
      const run = consumer({ mode: 'sqs' })
      await expect(run.handler(eventBridge, lambdaContext())).rejects.toThrow(/mode 'sqs' expects an SQS event/)
      expect(run.ran).toEqual([])
      expect(await run.items()).toEqual([])
      expect(run.logged).toContainEqual(expect.objectContaining({ error: { name: 'IdempotencyConfigError', message: expect.stringMatching(/mode 'sqs' expects an SQS event/) } }))
    })

    test("another source's batch in mode 'sqs' behind sqsPartialBatchFailure is not acknowledged: Lambda gets the error, so its records come back", async () => {
      const { kinesisEvent, kinesisRecord } = await import('../support/streams.js')
      const run = consumer({ mode: 'sqs' })
      const answer = run.handler(kinesisEvent([kinesisRecord({ n: 1 }), kinesisRecord({ n: 2 })]) as unknown as SQSEvent, lambdaContext())
      await expect(answer).rejects.toThrow(/mode 'sqs' expects an SQS event .*, not a Kinesis event/)
      expect(run.ran).toEqual([])
      expect(await run.items()).toEqual([])
    })

    test("an SNS notification in mode 'sqs' behind sqsPartialBatchFailure (the topic subscribed directly) is refused to Lambda, logged, not answered", async () => {
      // https://docs.aws.amazon.com/lambda/latest/dg/with-sns.html: Records of EventSource 'aws:sns', invoked asynchronously.
      const sns = { Records: [{ EventSource: 'aws:sns', EventVersion: '1.0', EventSubscriptionArn: 'arn:aws:sns:us-east-1:123456789012:payments:1', Sns: { Type: 'Notification', MessageId: 'm-1', TopicArn: 'arn:aws:sns:us-east-1:123456789012:payments', Message: '{"paymentId":"p-1"}', Timestamp: '2026-11-27T00:00:00.000Z' } }] }
      const run = consumer({ mode: 'sqs' })
      await expect(run.handler(sns as unknown as SQSEvent, lambdaContext())).rejects.toThrow(IdempotencyConfigError)
      expect(run.ran).toEqual([])
      expect(await run.items()).toEqual([])
      expect(run.logged).toContainEqual(expect.objectContaining({ error: expect.objectContaining({ name: 'IdempotencyConfigError' }) }))
    })

    test('an empty Records answers with no failures, without calling the handler or writing anything', async () => {
      const run = consumer({ mode: 'sqs' })
      expect(await run.invoke([])).toEqual({ batchItemFailures: [] })
      expect(run.ran).toEqual([])
      expect(await run.items()).toEqual([])
    })
  })

  describe('tables', () => {
    /** A consumer on another store: every record fails with a store error and none runs unprotected. */
    const expectEveryRecordFails = async (store: IdempotencyStore, message: RegExp): Promise<void> => {
      const run = consumer({ store })
      const records = [sqsRecord({ orderId: 'o-1' }), sqsRecord({ orderId: 'o-2' })]
      const response = await run.invoke(records)
      expect(failedIds(response)).toEqual(records.map((r) => r.messageId))
      for (const record of records) {
        const reason = run.reasons.get(record.messageId) as IdempotencyStoreError
        expect(reason).toBeInstanceOf(IdempotencyStoreError)
        expect(reason.operation).toBe('claim')
        expect(reason.message).toMatch(message)
      }
      expect(run.ran).toEqual([])
    }

    test('a table that does not exist fails every record with IdempotencyStoreError naming the table', async () => {
      const tableName = `missing-${Math.random().toString(36).slice(2, 10)}`
      const store = new DynamoDBStore({ tableName, client: localClient() })
      await expectEveryRecordFails(store, new RegExp(`table ${tableName} does not exist`))
    })

    test('a table with another key schema fails every record with IdempotencyStoreError naming the table\'s key and the setting', async () => {
      const client = localClient()
      const tableName = `wrong-key-${Math.random().toString(36).slice(2, 10)}`
      await createIdempotencyTable(client, tableName, { keyAttr: 'id' })
      const store = new DynamoDBStore({ tableName, client })
      await expectEveryRecordFails(store, new RegExp(`key schema of table ${tableName} does not match the store's settings: the table has partition key id \\(S\\).*keyAttr 'idempotencyKey'`))
      expect((await client.send(new ScanCommand({ TableName: tableName }))).Items).toEqual([])
    })

    test('AccessDenied on one key fails only that record, with IdempotencyStoreError naming dynamodb:PutItem', async () => {
      const bad = sqsRecord({ orderId: 'o-denied' })
      const records = batchAround(bad)
      // A client whose requests go to DynamoDB Local, except a PutItem of the bad record's key,
      // which is refused as IAM would (a dynamodb:LeadingKeys condition, say).
      const denied = localClient()
      const real = localClient()
      const mock = mockClient(denied)
      let deniedKey = ''
      const refusal = new DynamoDBServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message: `User: arn:aws:sts::123456789012:assumed-role/consumer/fn is not authorized to perform: dynamodb:PutItem on resource: ${table.tableName}`
      })
      mock.on(PutItemCommand).callsFake(async (input: PutItemCommandInput) => {
        if (input.Item?.idempotencyKey?.S === deniedKey) throw refusal
        return await real.send(new PutItemCommand(input))
      })
      mock.on(UpdateItemCommand).callsFake(async (input) => await real.send(new UpdateItemCommand(input)))
      mock.on(DeleteItemCommand).callsFake(async (input) => await real.send(new DeleteItemCommand(input)))
      mock.on(BatchGetItemCommand).callsFake(async (input) => await real.send(new BatchGetItemCommand(input)))
      // Grouped writes: IAM refuses the statement of the bad record's key alone; the others are sent.
      mock.on(BatchExecuteStatementCommand).callsFake(async (input: BatchExecuteStatementCommandInput) => {
        const statements = input.Statements ?? []
        const isDenied = (i: number): boolean => statements[i]?.Parameters?.some((p) => p.S === deniedKey) === true
        const allowed = statements.filter((_, i) => !isDenied(i))
        const answers = allowed.length === 0 ? [] : (await real.send(new BatchExecuteStatementCommand({ Statements: allowed }))).Responses ?? []
        let next = 0
        return {
          Responses: statements.map((_, i) => isDenied(i)
            ? { Error: { Code: 'AccessDenied', Message: `not authorized to perform: dynamodb:PartiQLInsert on resource: ${table.tableName}` } }
            : answers[next++])
        }
      })
      try {
        const run = consumer({ store: new DynamoDBStore({ tableName: table.tableName, client: denied }) })
        deniedKey = storedKey(run.namespace, bad.messageId)
        const reason = await expectOnlyBadFailed(run, records, bad, IdempotencyStoreError, /access denied.*dynamodb:PutItem/)
        expect((reason as IdempotencyStoreError).operation).toBe('claim')
        expect(reason.cause).toBe(refusal)
        expect(run.ran).not.toContain(bad.messageId)
      } finally {
        mock.restore()
      }
    })
  })
})

describe('invalid options are refused at construction with IdempotencyConfigError naming the option', () => {
  const store = new MemoryStore()

  /** Every bad value of `option` must be refused, and the message must name the option. */
  const refused = (option: keyof IdempotencyOptions, values: unknown[]): void => {
    for (const value of values) {
      const build = (): unknown => idempotency({ store, [option]: value } as unknown as IdempotencyOptions)
      expect(build).toThrow(IdempotencyConfigError)
      expect(build).toThrow(new RegExp(`\\b${option}\\b`))
    }
  }

  test('store', () => {
    for (const bad of [undefined, null, {}, { claim: async () => undefined }, 'IdempotencyStore']) {
      const build = (): unknown => idempotency({ store: bad } as unknown as IdempotencyOptions)
      expect(build).toThrow(IdempotencyConfigError)
      expect(build).toThrow(/\bstore\b/)
    }
  })
  test('key', () => { refused('key', ['', 42, {}, 'body..orderId', 'body[']) })
  test('payload', () => { refused('payload', ['', 42, true, 'body[']) })
  test('expiresAfterSeconds', () => { refused('expiresAfterSeconds', [0, -1, 1.5, '3600', Number.NaN, Number.POSITIVE_INFINITY]) })
  test('onFailure', () => { refused('onFailure', ['retry', '', 1, null]) })
  test('namespace', () => { refused('namespace', ['', 7, {}]) })
  test('mode', () => { refused('mode', ['batch', 'SQS', '', 1]) })
  test('maxStoreRequests', () => { refused('maxStoreRequests', [0, -2, 2.5, '8', Number.POSITIVE_INFINITY]) })
  test('localCacheSize', () => { refused('localCacheSize', [-1, 0.5, '10', Number.NaN]) })
  test('logger', () => { refused('logger', [{}, { warn: () => {} }, true, 'console', null]) })
  test('onOutcome', () => { refused('onOutcome', ['metrics', {}, 1]) })
  test('clockSkewMs', () => { refused('clockSkewMs', [-1, 1.5, '1000', Number.NaN]) })
  test('now', () => { refused('now', [Date.now(), 'Date.now', {}]) })
  test('timeoutMarginMs', () => { refused('timeoutMarginMs', [-1, 1.5, '1000', Number.NaN, Number.POSITIVE_INFINITY]) })
  test('responseHook', () => { refused('responseHook', ['headers', {}, 1, null]) })

  test("DynamoDBStore's tableName", () => {
    for (const bad of [undefined, '', 42]) {
      const build = (): unknown => new DynamoDBStore({ tableName: bad } as unknown as ConstructorParameters<typeof DynamoDBStore>[0])
      expect(build).toThrow(IdempotencyConfigError)
      expect(build).toThrow(/\btableName\b/)
    }
  })

  test("DynamoDBStore's client", () => {
    for (const bad of [{}, 'client', { send: 'not a function' }, null]) {
      const build = (): unknown => new DynamoDBStore({ tableName: 'IdempotencyStore', client: bad } as unknown as ConstructorParameters<typeof DynamoDBStore>[0])
      expect(build).toThrow(IdempotencyConfigError)
      expect(build).toThrow(/\bclient\b/)
    }
  })
})
