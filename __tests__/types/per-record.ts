/**
 * Type tests, compiled by `npm run typecheck` (never run): `perRecord`'s record and `key` are
 * typed for every batch source without annotating the function, on Middy 7, 6 and 5.
 *
 * Two forms type the record precisely:
 * - the handler given to `middy<TEvent>(...)`: its parameter is typed by `TEvent`, and TypeScript
 *   infers `perRecord`'s event from it (return-type inference), nothing else written;
 * - inside `.handler(...)`: Middy types that parameter as a conditional type over `.handler`'s own
 *   type parameters, which TypeScript instantiates with `never` while it infers an argument's call,
 *   so nothing can be inferred from it; the event is said once, `perRecord<SQSEvent>(...)`.
 * The last block pins that limit down, so a Middy release that lifts it is noticed.
 */
import middy7 from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'
import middy5Module from 'middy-core-5'
import middy6Module from 'middy-core-6'
import type {
  DynamoDBRecord, DynamoDBStreamEvent, KinesisStreamEvent, KinesisStreamRecord, MSKEvent, MSKRecord,
  SelfManagedKafkaEvent, SelfManagedKafkaRecord, SQSEvent, SQSRecord
} from 'aws-lambda'
import { idempotency, MemoryStore, perRecord } from '../../src/index.js'
import type { RecordOf } from '../../src/batch.js'

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
/** Compiles only when `T` is `true`. */
const assertType = <T extends true>(): T | undefined => undefined

const middy5 = middy5Module as unknown as typeof middy7
const middy6 = middy6Module as unknown as typeof middy7
const store = new MemoryStore()
/** The README's payment call: the key must be a string. */
declare const charge: (record: SQSRecord, options: { idempotencyKey: string, signal?: AbortSignal }) => Promise<{ chargeId: string }>

// The handler given to middy<TEvent>(): nothing annotated.
export const sqs = middy6<SQSEvent>(perRecord(async (record, { key, signal }) => {
  assertType<Equals<typeof record, SQSRecord>>()
  assertType<Equals<typeof key, string>>()
  return await charge(record, { idempotencyKey: key, signal })
})).use(sqsPartialBatchFailure()).use(idempotency<SQSEvent>({ store, key: (record) => record.body }))

export const kinesis = middy7<KinesisStreamEvent>(perRecord(async (record) => { assertType<Equals<typeof record, KinesisStreamRecord>>(); return record }))
  .use(idempotency({ store }))
export const dynamodbStreams = middy5<DynamoDBStreamEvent>(perRecord(async (record) => { assertType<Equals<typeof record, DynamoDBRecord>>(); return record }))
  .use(idempotency({ store }))
export const msk = middy6<MSKEvent>(perRecord(async (record) => { assertType<Equals<typeof record, MSKRecord>>(); return record }))
export const selfManagedKafka = middy7<SelfManagedKafkaEvent>(perRecord(async (record) => { assertType<Equals<typeof record, SelfManagedKafkaRecord>>(); return record }))

// The function's result is inferred too.
export const results = perRecord(async (record: SQSRecord) => ({ id: record.messageId }))
assertType<Equals<Awaited<ReturnType<typeof results>>, Array<PromiseSettledResult<{ id: string }>>>>()

// Inside .handler(): the event said once, as in middy<SQSEvent>().
for (const middy of [middy7, middy6, middy5]) {
  middy<SQSEvent>()
    .use(sqsPartialBatchFailure())
    .use(idempotency<SQSEvent>({ store, key: (record) => { assertType<Equals<typeof record, SQSRecord>>(); return record.body } }))
    .handler(perRecord<SQSEvent>(async (record, { key }) => {
      assertType<Equals<typeof record, SQSRecord>>()
      return await charge(record, { idempotencyKey: key })
    }))
  middy<KinesisStreamEvent>().use(idempotency({ store })).handler(perRecord<KinesisStreamEvent>(async (record) => { assertType<Equals<typeof record, KinesisStreamRecord>>(); return record }))
  middy<DynamoDBStreamEvent>().use(idempotency({ store })).handler(perRecord<DynamoDBStreamEvent>(async (record) => { assertType<Equals<typeof record, DynamoDBRecord>>(); return record }))
  middy<MSKEvent>().use(idempotency({ store })).handler(perRecord<MSKEvent>(async (record) => { assertType<Equals<typeof record, MSKRecord>>(); return record }))
  middy<SelfManagedKafkaEvent>().use(idempotency({ store })).handler(perRecord<SelfManagedKafkaEvent>(async (record) => { assertType<Equals<typeof record, SelfManagedKafkaRecord>>(); return record }))
}
// The handler keeps the chain's event type.
export const typedChain = middy6<SQSEvent>().use(idempotency({ store })).handler(perRecord<SQSEvent>(async (record) => record.messageId))
assertType<Equals<Parameters<typeof typedChain>[0], SQSEvent>>()

// A record type, or an annotated function, still work as they did.
export const byRecordType = perRecord<SQSRecord, string>(async (record) => record.body)
export const annotated = middy6<SQSEvent>().handler(perRecord(async (record: SQSRecord) => record.body))
assertType<Equals<RecordOf<SQSEvent>, SQSRecord>>()
assertType<Equals<RecordOf<MSKEvent>, MSKRecord>>()

// Not `any`: each of these is refused.
// @ts-expect-error an SQS record has no `kinesis`
export const notAny1 = middy6<SQSEvent>(perRecord(async (record) => record.kinesis))
// @ts-expect-error a Kinesis record has no `body`
export const notAny2 = middy6<KinesisStreamEvent>().handler(perRecord<KinesisStreamEvent>(async (record) => record.body))
// @ts-expect-error an MSK record has no `body` (its payload is `value`)
export const notAny3 = middy7<MSKEvent>(perRecord(async (record) => record.body))
// @ts-expect-error the key is a string, not a number
export const notAny4 = middy6<SQSEvent>(perRecord(async (_record, { key }) => { const n: number = key; return n }))
// @ts-expect-error a Kinesis handler does not take an SQS event
export const wrongEvent = middy6<SQSEvent>(perRecord<KinesisStreamEvent>(async (record) => record.kinesis))

// The README's pattern, unannotated inside .handler(): the key is a string under strict.
middy6<SQSEvent>().use(idempotency({ store })).handler(perRecord(async (record, { key, signal }) => await charge(record, { idempotencyKey: key, signal }), { concurrency: 10 }))

// The limit: with no type argument, inside .handler() the record is `any` (nothing to infer from),
// as it is for a key function inside .use() (whose parameter is an unconstrained type parameter).
middy6<SQSEvent>().handler(perRecord(async (record) => { assertType<Equals<typeof record, any>>(); return record }))
middy6<SQSEvent>().use(idempotency({ store, key: (record) => { assertType<Equals<typeof record, any>>(); return record.body } }))
