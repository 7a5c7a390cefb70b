/**
 * `npm run demo`: the SQS payment consumer of `sam-app/src/sqs-consumer.ts` against a real DynamoDB
 * (DynamoDB Local, started here), through what SQS really does to a consumer: lost
 * acknowledgements, producer retries, failures and redeliveries, overlapping invocations.
 * Every record's fate is read from outside: the card gateway's calls, the
 * `batchItemFailures`, the table. Then (demo/*-story.ts) a timeout in the middle of a batch,
 * an order and its stock reservation committed with `transact`, a Kinesis retry, and the
 * consumer on RedisStore when a Redis is at hand.
 */
import './demo/lambda-environment.js'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { createIdempotencyTable, localClientConfig, startDynamoDBLocal } from '../scripts/dynamodb-local.mjs'
import { DynamoDBStore } from '../src/dynamodb.js'
import type { Payment } from './sam-app/src/sqs-consumer.js'
import { CardGateway } from './demo/card-gateway.js'
import { Harness, type Invocation } from './demo/harness.js'
import { httpStory } from './demo/http-story.js'
import { heading, shorten, table } from './demo/print.js'
import { message, redelivery } from './demo/sqs-messages.js'
import { scanItems, type Item } from './demo/table-items.js'
import { timeoutStory } from './demo/timeout-story.js'
import { orderStory } from './demo/order-story.js'
import { streamStory } from './demo/stream-story.js'
import { redisStory } from './demo/redis-story.js'
import type { StoryResult } from './demo/story.js'

const TABLE = 'IdempotencyStore'

const payment = (id: number, amount: number, cardToken: string, currency = 'EUR'): Payment =>
  ({ paymentId: `pay-${id}`, amount, currency, cardToken })

const story = async (demo: Harness): Promise<void> => {
  const { gateway } = demo

  heading('1. A batch of three new payments',
    'Each is claimed in DynamoDB, charged, and stored as COMPLETED with its receipt.')
  const first = [
    message(payment(1001, 2500, 'tok_visa_4242')),
    message(payment(1002, 990, 'tok_mastercard_4444')),
    message(payment(1003, 12000, 'tok_visa_1881'))
  ]
  await demo.deliver(first, ['ran', 'ran', 'ran'])

  heading('2. The acknowledgement was lost: SQS delivers the same batch again',
    'Same messageIds, second receive. Nothing runs; every record is answered from the table.')
  await demo.deliver(first.map(redelivery), ['replayed', 'replayed', 'replayed'])

  heading('3. The payments service retried a send: pay-1002 again, under a new messageId',
    'The key is body.paymentId, so the copy is a duplicate; the new payment in the batch runs.')
  const copy = message(payment(1002, 990, 'tok_mastercard_4444'))
  await demo.deliver([copy, message(payment(1004, 4200, 'tok_visa_5556'))], ['replayed', 'ran'])

  heading('4. The amex network is down, and a card is declined',
    "A fault releases the claim (onFailure: 'delete'); a decline is kept FAILED (onFailure: 'fail').")
  gateway.networkDown('amex')
  gateway.decline('tok_visa_0341', 'insufficient funds')
  const troubled = [
    message(payment(1005, 1500, 'tok_visa_3220')),
    message(payment(1006, 8800, 'tok_amex_0005')),
    message(payment(1007, 30000, 'tok_visa_0341'))
  ]
  const fourth = await demo.deliver(troubled, ['ran', 'failed', 'failed'])

  heading('5. The network is back; SQS redelivers only the two records reported failed',
    'The released payment runs again and is charged; the declined one is refused without calling the gateway.')
  gateway.networkUp('amex')
  await demo.deliver(fourth.filter((r) => r.returnedToQueue).map((r) => redelivery(r.record)), ['retried', 'refused'])

  heading('6. Two invocations get the same message at once',
    'Its visibility timeout ran out while the first was still charging. ' +
    "One claim wins; the other is told 'in progress'.")
  const contested = message(payment(1008, 5600, 'tok_mastercard_9991'))
  const charging = gateway.holdNextCharge()
  const a = demo.invoke([contested], 'A')
  const b = demo.invoke([redelivery(contested)], 'B')
  // The loser answers at once; the winner is still charging (held), so it cannot have completed.
  await Promise.race([a, b])
  charging.finish()
  const [fromA, fromB] = await Promise.all([a, b])
  const both: Invocation[] = [{ records: [contested], ...fromA }, { records: [redelivery(contested)], ...fromB }]
  const contest = await demo.report(both, ['ran', 'conflict'])

  heading('7. SQS redelivers the copy that got the conflict',
    'The winner has completed by now: the copy is answered with its receipt.')
  const loser = contest.find((r) => r.outcome === 'conflict')
  if (loser !== undefined) await demo.deliver([redelivery(loser.record)], ['replayed'])
}

const showTable = async (demo: Harness): Promise<void> => {
  heading(`The table ${TABLE}`,
    'Keys are namespace#sha256(key): no payment data in them; the namespace is the name of the function. ' +
    'TTL deletes expired records.')
  const items = await scanItems(demo.client, TABLE)
  const now = Date.now() / 1000
  const namespaceOf = (item: Item): string => String(item.idempotencyKey).split('#')[0] ?? ''
  const rows = items
    // By function (namespace), then COMPLETED before FAILED, then by stored response.
    .sort((x, y) => namespaceOf(x).localeCompare(namespaceOf(y)) || String(x.status).localeCompare(String(y.status)) ||
      String(x.responseData).localeCompare(String(y.responseData)))
    .map((item) => {
      const key = String(item.idempotencyKey)
      const expiry = Number(item.expiry)
      const error = item.error as { name?: string, message?: string } | undefined
      const stored = item.status === 'FAILED'
        ? `error: ${error?.name}: ${error?.message}`
        : String(item.responseData ?? '')
      const expiresAt = new Date(expiry * 1000).toISOString().slice(0, 16).replace('T', ' ')
      return [
        `${key.slice(0, key.indexOf('#') + 13)}…`,
        String(item.status),
        `${expiresAt} (in ${Math.round((expiry - now) / 3600)} h)`,
        shorten(stored, 80)
      ]
    })
  table(['idempotencyKey', 'status', 'expiry (UTC)', 'responseData / error'], rows)
}

const summarise = (demo: Harness): void => {
  heading('Charges per payment', 'Deliveries counted from the batches; charges from the card gateway\'s ledger.')
  const payments = [...new Set(demo.reports.map((r) => r.paymentId))]
  const declined = new Set(demo.reports.filter((r) => r.outcome === 'refused').map((r) => r.paymentId))
  table(['payment', 'deliveries', 'charges'], payments.map((id) => [
    id,
    String(demo.reports.filter((r) => r.paymentId === id).length),
    `${demo.gateway.chargesOf(id)}${declined.has(id) ? ' (declined)' : ''}`
  ]))
  for (const id of payments) {
    const want = declined.has(id) ? 0 : 1
    if (demo.gateway.chargesOf(id) !== want) {
      demo.problems.push(`${id} was charged ${demo.gateway.chargesOf(id)} times, not ${want}`)
    }
  }
  const accepted = payments.filter((id) => !declined.has(id))
  const chargedOnce = accepted.length === payments.length
    ? 'every payment'
    : `each of the ${accepted.length} accepted payments`
  console.log(`\nSummary: ${payments.length} payments in ${demo.reports.length} deliveries; ` +
    `${demo.gateway.ledger.length} charges — ${chargedOnce} charged exactly once` +
    (declined.size === 0 ? '.' : `, ${[...declined].join(', ')} declined once and never sent to the gateway again.`))
}

const main = async (): Promise<number> => {
  console.log('middy-idempotency demo: the example consumers (examples/sam-app/src/*.ts) on DynamoDB Local')
  const local = await startDynamoDBLocal()
  const client = new DynamoDBClient(localClientConfig(local.endpoint))
  try {
    await createIdempotencyTable(client, TABLE)
    const demo = new Harness(new DynamoDBStore({ tableName: TABLE, client }), new CardGateway(), client, TABLE)
    await story(demo)
    const http = await httpStory(new DynamoDBStore({ tableName: TABLE, client }))
    demo.problems.push(...http.problems)
    const store = new DynamoDBStore({ tableName: TABLE, client })
    const items = async (): Promise<Item[]> => await scanItems(client, TABLE)
    const more: StoryResult[] = []
    more.push(await timeoutStory(store, items))
    more.push(await orderStory(() => new DynamoDBClient(localClientConfig(local.endpoint)), TABLE))
    more.push(await streamStory(store))
    more.push(await redisStory())
    for (const result of more) demo.problems.push(...result.problems)
    await showTable(demo)
    summarise(demo)
    console.log(`HTTP: ${http.requests} requests with one Idempotency-Key, ${http.charges} charge.`)
    for (const result of more) console.log(result.summary)
    if (demo.problems.length === 0) return 0
    console.log('\nUnexpected:')
    for (const problem of demo.problems) console.log(`  - ${problem}`)
    return 1
  } finally {
    client.destroy()
    await local.stop()
  }
}

main().then(
  (code) => { process.exitCode = code },
  (error: unknown) => {
    console.error(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  })
