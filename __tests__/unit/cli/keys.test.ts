import { expect, test } from '@jest/globals'
import middy from '@middy/core'
import { idempotency, MemoryStore, perRecord } from '../../../src/index.js'
import { keysOf } from '../../../src/cli/keys.js'
import { latticeV2Event, restApiEvent } from '../../support/http.js'
import { kafkaRecord, mskEvent, selfManagedKafkaEvent } from '../../support/kafka.js'
import { sqsEvent, sqsRecord, lambdaContext } from '../../support/sqs.js'
import { dynamodbEvent, dynamodbRecord, kinesisEvent, kinesisRecord } from '../../support/streams.js'

/** The keys the middleware really stores `event`'s records under, with `options`. */
const storedKeys = async (event: unknown, options: { key?: string } = {}): Promise<string[]> => {
  const store = new MemoryStore()
  await middy().use(idempotency({ store, namespace: 'ns', logger: false, ...options })).handler(perRecord(async () => 'ok'))(event, lambdaContext())
  return store.records().map((r) => r.key).sort()
}

const printed = (event: unknown, keyPath?: string): string[] => {
  const keys = keysOf(event, { namespace: 'ns', ...(keyPath === undefined ? {} : { keyPath }) })
  if (!('records' in keys)) throw new Error('expected a batch')
  return keys.records.map((r) => ('key' in r ? r.key : r.error)).sort()
}

test.each([
  ['SQS', sqsEvent([sqsRecord({ orderId: 'a' }), sqsRecord({ orderId: 'b' })])],
  ['Kinesis', kinesisEvent([kinesisRecord({ orderId: 'a' }), kinesisRecord({ orderId: 'b' })])],
  ['DynamoDB Streams', dynamodbEvent([dynamodbRecord('1', { orderId: 'a' }), dynamodbRecord('2', { orderId: 'b' })])],
  ['MSK', mskEvent([kafkaRecord('payments', 0, 1, { orderId: 'a' }), kafkaRecord('payments', 0, 2, { orderId: 'b' })])],
  ['self-managed Kafka', selfManagedKafkaEvent([kafkaRecord('payments', 0, 1, { orderId: 'a' }), kafkaRecord('payments', 0, 2, { orderId: 'b' })])]
])('%s: the default keys are the ones the middleware stores', async (_name, event) => {
  expect(printed(event)).toEqual(await storedKeys(event))
})

test('a key path, read into the JSON body, gives the key the middleware stores with that key option', async () => {
  const event = sqsEvent([sqsRecord({ orderId: 'a' }), sqsRecord({ orderId: 'b' })])
  expect(printed(event, 'body.orderId')).toEqual(await storedKeys(event, { key: 'body.orderId' }))
})

test('a single SQS record gives its own key, as within its batch', async () => {
  const record = sqsRecord({ orderId: 'a' }, { messageId: 'm-9' })
  expect(keysOf(record, { namespace: 'ns' })).toEqual({ source: 'aws:sqs', records: [{ id: 'm-9', key: (await storedKeys(sqsEvent([record])))[0] }] })
})

test('a whole event gives one key; an HTTP request without Idempotency-Key says so', async () => {
  const store = new MemoryStore()
  const event = { source: 'billing', detail: { orderId: 'o-1' } }
  await middy().use(idempotency({ store, namespace: 'ns', logger: false })).handler(async () => 1)(event, lambdaContext())
  expect(keysOf(event, { namespace: 'ns' })).toEqual({ source: 'event', key: store.records()[0]?.key })
  expect(() => keysOf({ requestContext: { http: { method: 'POST', path: '/pay' } }, rawPath: '/pay', headers: {}, body: '{}', version: '2.0' }, { namespace: 'ns' }))
    .toThrow(/Idempotency-Key header is missing/)
})

test('--tenant: a function in tenant isolation mode stores each record under its tenant, and the key command says which', async () => {
  const event = sqsEvent([sqsRecord({ orderId: 'a' }, { messageId: 'm-1' })])
  const store = new MemoryStore()
  await middy().use(idempotency({ store, namespace: 'ns', logger: false })).handler(perRecord(async () => 'ok'))(event, { ...lambdaContext(), tenantId: 'acme#eu' })
  const [stored] = store.records().map((r) => r.key)
  const keys = keysOf(event, { namespace: 'ns', tenant: 'acme#eu' })
  expect(keys).toEqual({ source: 'aws:sqs', records: [{ id: 'm-1', key: stored }] })
  expect(stored).toMatch(/^ns#acme%23eu#/)
  expect(keysOf(event, { namespace: 'ns' })).not.toEqual(keys)
})

test.each([
  ['a VPC Lattice v2 request (default key)', latticeV2Event({ key: 'k-1', caller: 'alice' }), undefined],
  ['a REST API request with a base64-encoded body (key path into it)', restApiEvent({ base64: true, body: '{"orderId":"o-1"}' }), 'body.orderId']
])('%s gives the key the middleware stores', async (_name, event, keyPath) => {
  const store = new MemoryStore()
  await middy().use(idempotency({ store, namespace: 'ns', logger: false, ...(keyPath === undefined ? {} : { key: keyPath }) })).handler(async () => 1)(event, lambdaContext())
  expect(keysOf(event, { namespace: 'ns', ...(keyPath === undefined ? {} : { keyPath }) })).toEqual({ source: 'event', key: store.records()[0]?.key })
})
