/**
 * Type tests, compiled by `npm run typecheck` (never run): `key` and `payload` functions are
 * typed by what they receive (issue 8 #10). An SQS event's functions get one record; any other
 * event's get the event. Without a type argument, everything stays as loose as it was.
 */
import type { APIGatewayProxyEventV2, DynamoDBRecord, DynamoDBStreamEvent, EventBridgeEvent, KinesisStreamEvent, KinesisStreamRecord, MSKEvent, MSKRecord, SelfManagedKafkaEvent, SelfManagedKafkaRecord, SQSEvent, SQSRecord } from 'aws-lambda'
import { idempotency, MemoryStore, type IdempotencyOptions } from '../../src/index.js'

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
/** Compiles only when `T` is `true`. */
const assertType = <T extends true>(): T | undefined => undefined

const store = new MemoryStore()

export const typedSqs = idempotency<SQSEvent>({
  store,
  key: (record) => { assertType<Equals<typeof record, SQSRecord>>(); return record.messageId },
  payload: (record) => record.body
})

// @ts-expect-error an SQS record has no `whatever`
export const wrongSqsKey = idempotency<SQSEvent>({ store, key: (u) => u.whatever.deep })

// @ts-expect-error an SQS record has no `detail` (it is not the event)
export const eventInsteadOfRecord = idempotency<SQSEvent>({ store, payload: (record) => record.detail })

export const typedHttp = idempotency<APIGatewayProxyEventV2>({
  store,
  key: (event) => { assertType<Equals<typeof event, APIGatewayProxyEventV2>>(); return event.headers['idempotency-key'] },
  payload: (event) => event.body
})

// @ts-expect-error an HTTP event has no `whatever`
export const wrongHttpPayload = idempotency<APIGatewayProxyEventV2>({ store, payload: (u) => u.whatever.deep })

export const typedEventBridge = idempotency<EventBridgeEvent<'OrderPlaced', { orderId: string }>>({
  store,
  key: (event) => event.detail.orderId
})

// Paths stay strings, whatever the event.
export const pathKey = idempotency<SQSEvent>({ store, key: 'body.orderId', payload: false })

// Untyped uses keep compiling as before: the unit is `any`, or whatever the function declares.
export const untyped = idempotency({ store, key: (u) => u.whatever.deep })
export const declared = idempotency({ store, key: (record: SQSRecord) => record.messageId })
export const partial: Partial<IdempotencyOptions> = { key: (record: SQSRecord) => record.messageId }

// Every batch source's functions get one record.
export const typedKinesis = idempotency<KinesisStreamEvent>({ store, key: (record) => { assertType<Equals<typeof record, KinesisStreamRecord>>(); return record.kinesis.sequenceNumber } })
export const typedStreams = idempotency<DynamoDBStreamEvent>({ store, key: (record) => { assertType<Equals<typeof record, DynamoDBRecord>>(); return record.dynamodb?.Keys } })
export const typedMsk = idempotency<MSKEvent>({ store, key: (record) => { assertType<Equals<typeof record, MSKRecord>>(); return record.value } })
export const typedKafka = idempotency<SelfManagedKafkaEvent>({ store, key: (record) => { assertType<Equals<typeof record, SelfManagedKafkaRecord>>(); return record.value } })
// @ts-expect-error a Kafka record has no `body` (its payload is `value`)
export const wrongKafka = idempotency<MSKEvent>({ store, key: (record) => record.body })
