import type { SQSBatchResponse, SQSRecord } from 'aws-lambda'
import type { IdempotencyLogger, IdempotencyStore } from '../../src/index.js'
import { createHandler, type ChargeOptions, type Payment, type Receipt } from '../sam-app/src/sqs-consumer.js'
import { CardGateway } from './card-gateway.js'
import { heading, table } from './print.js'
import { batch, lambdaContext, message, redelivery } from './sqs-messages.js'
import type { StoryResult } from './story.js'
import type { Item } from './table-items.js'

/** The function's timeout, and how long before it Middy answers (timeoutEarlyInMillis). */
const TIMEOUT_MS = 1500
const EARLY_MS = 1000
const HUNG = 'pay-2004'

const sleep = async (ms: number): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))
}
const messageOf = (entry: unknown): string => (entry as { message?: string } | undefined)?.message ?? String(entry)
const failedIds = (response: SQSBatchResponse): string[] => response.batchItemFailures.map((f) => f.itemIdentifier)

/**
 * One charge hangs until Middy's early timeout: the payments that finished are COMPLETED at
 * the answer, the hung one is IN_PROGRESS; after its lease lapses, the redelivered batch
 * replays the finished ones and charges only the hung one.
 */
export const timeoutStory = async (store: IdempotencyStore, items: () => Promise<Item[]>): Promise<StoryResult> => {
  heading('9. Six payments in one batch; the charge of pay-2004 hangs until Middy times out',
    `The deadline is ${TIMEOUT_MS} ms away and Middy answers ${EARLY_MS} ms before it. ` +
    'perRecord stores each payment as soon as its own charge ends.')
  const problems: string[] = []
  const gateway = new CardGateway('ch_t')
  // What the gateway saw: calls per payment, and the idempotency key each came with.
  const calls = new Map<string, number>()
  const keys = new Map<string, string>()
  let cut: ((error: Error) => void) | undefined
  const charge = async (payment: Payment, { idempotencyKey }: ChargeOptions): Promise<Receipt> => {
    if (idempotencyKey !== undefined) keys.set(payment.paymentId, idempotencyKey)
    const n = (calls.get(payment.paymentId) ?? 0) + 1
    calls.set(payment.paymentId, n)
    // The request is out and the gateway never answers; nothing the signal can take back.
    if (payment.paymentId === HUNG && n === 1) await new Promise<never>((_resolve, reject) => { cut = reject })
    return await gateway.charge(payment)
  }
  const notes: string[] = []
  let staleSettled: () => void = () => {}
  const stale = new Promise<void>((resolve) => { staleSettled = resolve })
  const note = (entry: unknown): void => {
    notes.push(messageOf(entry))
    if (/lease lost/.test(messageOf(entry))) staleSettled()
  }
  const logger: IdempotencyLogger = { warn: note, error: note }
  const handler = createHandler({
    store,
    charge,
    logger,
    namespace: 'payments-consumer',
    timeoutEarlyInMillis: EARLY_MS,
    logFailedRecord: () => {}
  })

  const payments: Payment[] = [2500, 990, 12000, 4200, 1500, 8800].map((amount, i) =>
    ({ paymentId: `pay-${2001 + i}`, amount, currency: 'EUR', cardToken: `tok_visa_${4242 + i}` }))
  const records = payments.map(message)
  const statuses = async (): Promise<Map<string, string>> => {
    const byKey = new Map((await items()).map((item) => [String(item.idempotencyKey), String(item.status)]))
    return new Map(payments.map((p) => [p.paymentId, byKey.get(keys.get(p.paymentId) ?? '') ?? 'absent']))
  }
  const paymentOf = (record: SQSRecord): string => (JSON.parse(record.body) as Payment).paymentId

  const started = Date.now()
  const first = await handler(batch(records), lambdaContext(TIMEOUT_MS)) as SQSBatchResponse
  const answeredAt = Date.now() - started
  const atAnswer = await statuses()
  const returned = new Set(failedIds(first))
  table(['message', 'payment', 'gateway', 'record at the answer', 'SQS'], records.map((record) => {
    const id = paymentOf(record)
    const receipt = gateway.ledger.find((r) => r.paymentId === id)
    return [
      record.messageId,
      id,
      receipt === undefined ? 'no answer yet (hanging)' : `charged ${receipt.chargeId}`,
      atAnswer.get(id) ?? '',
      returned.has(record.messageId) ? 'retry' : 'done'
    ]
  }))
  for (const line of new Set(notes.splice(0))) console.log(`  log: ${line}`)
  console.log(`  Answered ${answeredAt} ms after the start: batchItemFailures names only ${HUNG}'s message; ` +
    'its lease runs to the deadline.')
  const hungMessage = records.find((r) => paymentOf(r) === HUNG)?.messageId
  if (failedIds(first).join() !== hungMessage) {
    problems.push(`timeout: expected only ${hungMessage} reported failed, got [${failedIds(first).join(', ')}]`)
  }
  for (const [id, status] of atAnswer) {
    const want = id === HUNG ? 'IN_PROGRESS' : 'COMPLETED'
    if (status !== want) problems.push(`timeout: ${id} was ${status} at the answer, not ${want}`)
  }

  heading('9b. The lease lapses with the deadline; the whole batch comes back',
    'As it does when no answer reaches Lambda (the function stopped at its deadline). ' +
    'Finished payments replay; only the hung one is charged.')
  await sleep(started + TIMEOUT_MS + 100 - Date.now())
  const callsBefore = new Map(calls)
  const again = records.map(redelivery)
  const second = await handler(batch(again), lambdaContext()) as SQSBatchResponse
  const afterRedelivery = await statuses()
  table(['message', 'payment', 'receive', 'outcome', 'gateway', 'record', 'SQS'], again.map((record) => {
    const id = paymentOf(record)
    const ran = (calls.get(id) ?? 0) > (callsBefore.get(id) ?? 0)
    const receipt = gateway.ledger.find((r) => r.paymentId === id)
    return [
      record.messageId,
      id,
      record.attributes.ApproximateReceiveCount,
      ran ? 'ran again' : 'replayed',
      ran ? `charged ${receipt?.chargeId ?? '?'}` : 'not called',
      afterRedelivery.get(id) ?? '',
      failedIds(second).includes(record.messageId) ? 'retry' : 'done'
    ]
  }))
  const ranAgain = payments
    .filter((p) => (calls.get(p.paymentId) ?? 0) > (callsBefore.get(p.paymentId) ?? 0))
    .map((p) => p.paymentId)
  if (ranAgain.join() !== HUNG) {
    problems.push(`timeout: on the redelivery ${ranAgain.join(', ') || 'nothing'} ran, not only ${HUNG}`)
  }
  if (failedIds(second).length > 0) {
    problems.push(`timeout: the redelivery reported ${failedIds(second).join(', ')} failed`)
  }

  // The first invocation's hung request finally fails. Its release is fenced by its lease
  // token, so the record the redelivery completed stands. Nothing may be left pending.
  cut?.(new Error('connection reset by the card gateway'))
  const wait = new Promise<void>((resolve) => { setTimeout(resolve, 3000).unref() })
  await Promise.race([stale, wait])
  const stood = (await statuses()).get(HUNG)
  for (const line of new Set(notes.splice(0))) console.log(`  log: ${line}`)
  console.log(`  The first invocation's hung charge then fails: its release is fenced off, ${HUNG} stays ${stood}.`)
  if (stood !== 'COMPLETED') problems.push(`timeout: ${HUNG} is ${stood} after the stale charge failed`)
  const twice = payments
    .filter((p) => gateway.chargesOf(p.paymentId) !== 1)
    .map((p) => `${p.paymentId} (${gateway.chargesOf(p.paymentId)})`)
  if (twice.length > 0) problems.push(`timeout: not charged exactly once: ${twice.join(', ')}`)
  const replayed = payments.length - ranAgain.length
  return {
    problems,
    summary: `Timeout: ${payments.length} payments, one hung to the deadline; ` +
      `on the redelivery ${replayed} finished ones replayed, ${ranAgain.length} ran again; ` +
      `${payments.filter((p) => gateway.chargesOf(p.paymentId) > 1).length} charged twice.`
  }
}
