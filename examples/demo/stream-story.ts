import type { KinesisStreamBatchResponse, KinesisStreamEvent, KinesisStreamRecord } from 'aws-lambda'
import type { IdempotencyStore } from '../../src/index.js'
import {
  createHandler, movementOf, type LedgerOptions, type Movement, type Posting
} from '../sam-app/src/kinesis-consumer.js'
import { heading, table } from './print.js'
import { lambdaContext } from './sqs-messages.js'
import type { StoryResult } from './story.js'

let sequence = 49650115062381474832410128946522013581020340311839621122n

/** A Kinesis record as Lambda delivers it: base64 `data`, shard-wide increasing sequence numbers. */
const kinesisRecord = (movement: Movement): KinesisStreamRecord => {
  const sequenceNumber = String(sequence += 17n)
  return {
    kinesis: {
      kinesisSchemaVersion: '1.0',
      partitionKey: movement.accountId,
      sequenceNumber,
      data: Buffer.from(JSON.stringify(movement)).toString('base64'),
      approximateArrivalTimestamp: Date.now() / 1000
    },
    eventSource: 'aws:kinesis',
    eventVersion: '1.0',
    eventID: `shardId-000000000003:${sequenceNumber}`,
    eventName: 'aws:kinesis:record',
    invokeIdentityArn: 'arn:aws:iam::123456789012:role/ledger-consumer',
    awsRegion: 'eu-west-1',
    eventSourceARN: 'arn:aws:kinesis:eu-west-1:123456789012:stream/account-movements'
  }
}

/** The ledger service, in memory: its postings are what must be exactly one per movement, in order per account. */
class Ledger {
  readonly postings: Array<Posting & { accountId: string }> = []
  readonly #busyOnce = new Set<string>()
  readonly #balances = new Map<string, number>()
  calls: string[] = []
  lockOnce (movementId: string): void { this.#busyOnce.add(movementId) }
  readonly post = async (movement: Movement, _options: LedgerOptions): Promise<Posting> => {
    this.calls.push(movement.movementId)
    if (this.#busyOnce.delete(movement.movementId)) {
      throw new Error(`ledger: account ${movement.accountId} is locked, try again`)
    }
    const balance = (this.#balances.get(movement.accountId) ?? 0) + movement.amount
    this.#balances.set(movement.accountId, balance)
    const entryId = `le_${String(this.postings.length + 1).padStart(3, '0')}`
    const posting = { movementId: movement.movementId, entryId, balance }
    this.postings.push({ ...posting, accountId: movement.accountId })
    return posting
  }
}

const short = (record: KinesisStreamRecord): string => `…${record.kinesis.sequenceNumber.slice(-6)}`

/**
 * One Kinesis batch with a failure (examples/sam-app/src/kinesis-consumer.ts): the rest of that partition
 * key is held back, other keys go on; Lambda's retry from the lowest failed sequence number
 * runs the held-back records and replays the completed ones.
 */
export const streamStory = async (store: IdempotencyStore): Promise<StoryResult> => {
  heading(
    '11. A Kinesis batch with a failure (examples/sam-app/src/kinesis-consumer.ts): ' +
    'account movements posted to a ledger',
    'Partition key = account. The ledger refuses mv-A2 once: the rest of acct-A is held back, ' +
    'the other accounts go on.'
  )
  const problems: string[] = []
  const ledger = new Ledger()
  const handler = createHandler({ store, post: ledger.post, namespace: 'ledger-consumer', logger: false })
  const movements: Movement[] = [
    ['A1', 'acct-A', 5000],
    ['B1', 'acct-B', 1200],
    ['A2', 'acct-A', -2000],
    ['B2', 'acct-B', -200],
    ['A3', 'acct-A', -500],
    ['C1', 'acct-C', 700]
  ].map(([id, accountId, amount]) =>
    ({ movementId: `mv-${String(id)}`, accountId: String(accountId), amount: Number(amount) }))
  ledger.lockOnce('mv-A2')
  const records = movements.map(kinesisRecord)

  const deliver = async (batch: KinesisStreamRecord[]): Promise<string[]> => {
    const calledBefore = ledger.calls.length
    const event: KinesisStreamEvent = { Records: batch.map((r) => structuredClone(r)) }
    const answer = await handler(event, lambdaContext()) as KinesisStreamBatchResponse
    const failed = answer.batchItemFailures.map((f) => f.itemIdentifier)
    const called = ledger.calls.slice(calledBefore)
    table(['sequence', 'partition key', 'movement', 'amount', 'outcome', 'Lambda'], batch.map((record) => {
      const movement = movementOf(record)
      const posting = ledger.postings.find((p) => p.movementId === movement.movementId)
      const isFailed = failed.includes(record.kinesis.sequenceNumber)
      const outcome = called.includes(movement.movementId)
        ? (isFailed
            ? 'failed: the ledger refused it'
            : `posted ${posting?.entryId ?? '?'}, balance ${posting?.balance ?? '?'}`)
        : (isFailed ? 'held back (not run)' : 'replayed, ledger not called')
      return [
        short(record),
        record.kinesis.partitionKey,
        movement.movementId,
        String(movement.amount),
        outcome,
        isFailed ? 'failed' : 'done'
      ]
    }))
    const lowest = batch.find((r) => failed.includes(r.kinesis.sequenceNumber))
    console.log(`  batchItemFailures: [${failed.map((id) => `…${id.slice(-6)}`).join(', ')}]` +
      (lowest === undefined ? '' : `; Lambda resumes the shard from ${short(lowest)} (the lowest)`))
    return failed
  }

  const first = await deliver(records)
  const expected = [records[2], records[4]].map((r) => r?.kinesis.sequenceNumber)
  if (first.join() !== expected.join()) {
    problems.push(`kinesis: first batch reported [${first.join(', ')}], not mv-A2 and mv-A3`)
  }

  const from = records.findIndex((r) => first.includes(r.kinesis.sequenceNumber))
  heading(
    `11b. Lambda retries the shard from ${short(records[from] as KinesisStreamRecord)}: ` +
    `${records.length - from} records come back`,
    'mv-A2 and mv-A3 run, in order; mv-B2 and mv-C1 had completed: they replay from the table without running.'
  )
  const calledBefore = ledger.calls.length
  const second = await deliver(from < 0 ? [] : records.slice(from))
  const ranOnRetry = ledger.calls.slice(calledBefore)
  if (second.length > 0) problems.push(`kinesis: the retry reported ${second.length} records failed`)
  if (ranOnRetry.join() !== 'mv-A2,mv-A3') {
    problems.push(`kinesis: the retry ran ${ranOnRetry.join(', ')}, not mv-A2, mv-A3`)
  }

  const rows = [...new Set(movements.map((m) => m.accountId))].map((account) => {
    const posted = ledger.postings.filter((p) => p.accountId === account).map((p) => p.movementId)
    const sent = movements.filter((m) => m.accountId === account).map((m) => m.movementId)
    if (posted.join() !== sent.join()) {
      problems.push(`kinesis: ${account} was posted ${posted.join(', ')}, sent ${sent.join(', ')}`)
    }
    const balance = ledger.postings.filter((p) => p.accountId === account).at(-1)?.balance ?? 0
    return [account, sent.join(' '), posted.join(' '), String(balance)]
  })
  table(['account', 'on the stream', 'posted to the ledger', 'balance'], rows)
  const deliveries = records.length + (from < 0 ? 0 : records.length - from)
  return {
    problems,
    summary: `Kinesis: ${movements.length} movements in ${deliveries} record deliveries; ` +
      `${ledger.postings.length} postings, each movement once, in order per account.`
  }
}
