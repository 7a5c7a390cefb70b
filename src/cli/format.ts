import type { RecordView, ReleaseResult } from '../stores/operator/records.js'
import type { KeysOf } from './keys.js'
import type { CreateTableResult } from '../stores/dynamodb/create-table.js'

/** Columns padded to their widest cell; the last one is not padded. */
export const table = (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string => {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]): string => cells
    .map((cell, i) => i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number))
    .join('  ')
    .trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}

const leaseOf = (view: RecordView): string => view.leaseUntil === undefined
  ? '-'
  : `${view.leaseUntil} (${view.leaseLive === true ? 'live' : 'lapsed'})`

const outcomeOf = (view: RecordView): string =>
  view.result !== undefined ? view.result : view.error !== undefined ? `${view.error.name}: ${view.error.message}` : ''

export const listText = (views: readonly RecordView[]): string => views.length === 0
  ? 'no records'
  : table(['KEY', 'STATUS', 'EXPIRES', 'LEASE', 'RESULT / ERROR'],
      views.map((v) => [
        v.key, v.status, `${v.expiresAt}${v.expired ? ' (expired)' : ''}`, leaseOf(v), outcomeOf(v).slice(0, 60)
      ]))

const protectionOf = (view: RecordView): string =>
  view.protecting ? 'protects its key' : 'no longer protects its key: the next claim takes it over'

const errorOf = (error: NonNullable<RecordView['error']>): string =>
  `${error.name}: ${error.message}${error.code === undefined ? '' : ` (code ${error.code})`}`

export const inspectText = (view: RecordView): string => [
  `key:          ${view.key}`,
  `status:       ${view.status}`,
  `expires:      ${view.expiresAt} (${view.expired ? 'expired: ' : ''}${protectionOf(view)})`,
  `lease:        ${leaseOf(view)}`,
  `lease token:  ${view.leaseToken ?? '-'}`,
  `payload hash: ${view.payloadHash ?? '-'}`,
  ...(view.result === undefined ? [] : [`result:       ${view.result}`]),
  ...(view.error === undefined ? [] : [`error:        ${errorOf(view.error)}`])
].join('\n')

/** A release that removed nothing, as the CLI says it; `not-confirmed` is the CLI's own: the operator said no. */
type Refusal = Exclude<ReleaseResult, { released: true }>['reason'] | 'not-confirmed'

const REFUSALS: Record<Refusal, (record?: RecordView) => string> = {
  'not-found': () => 'no record under this key: nothing to release',
  completed: () => 'the record is COMPLETED: its result is what a redelivery gets. ' +
    'To run its work again, remove it with --completed (confirmed; the work then runs a second time)',
  'not-completed': (record) =>
    `the record is ${record?.status ?? 'not'}, not COMPLETED: release it without --completed`,
  'live-lease': () => 'the record is IN_PROGRESS and its lease is live: its work may still be running. ' +
    'Release it anyway with --force (a redelivery may then run it twice)',
  changed: () => 'the record changed since it was read (completed, or claimed again): nothing was removed',
  'not-confirmed': () => 'not confirmed: nothing was removed'
}

export const refusalText = (reason: Refusal, record?: RecordView): string =>
  `not released: ${REFUSALS[reason](record)}${record === undefined ? '' : `\n${inspectText(record)}`}`

export const releaseText = (key: string, result: ReleaseResult): string => {
  if (!result.released) return refusalText(result.reason, result.record)
  const { record } = result
  if (record.status === 'COMPLETED') {
    return `released ${key}: removed its COMPLETED record (result ${record.result ?? 'none'}); ` +
      'the next delivery runs its work again'
  }
  const what = record.status === 'FAILED'
    ? `FAILED record (error ${record.error?.name ?? 'Error'}: ${record.error?.message ?? ''})`
    : `IN_PROGRESS record (lease ${leaseOf(record)})`
  return `released ${key}: removed its ${what}; the next delivery runs it`
}

/** The question `release --completed` asks at a terminal, under the record it would remove. */
export const confirmText = (view: RecordView): string =>
  `${inspectText(view)}\nRemove this COMPLETED record? Its work runs again on the next delivery. [y/N] `

export const keysText = (keys: KeysOf): string => 'key' in keys
  ? keys.key
  : table(['RECORD', 'KEY'], keys.records.map((r) => [r.id, 'key' in r ? r.key : `(no key: ${r.error})`]))

export const createTableText = (result: CreateTableResult): string => {
  const sortKey = result.sortKey === undefined ? 'no sort key' : `sort key ${result.sortKey} (S)`
  const schema = `partition key ${result.partitionKey} (S), ${sortKey}`
  const ttl = result.ttl === 'enabled'
    ? `TTL turned on for ${result.ttlAttribute}`
    : `TTL already on for ${result.ttlAttribute}`
  return result.created
    ? `created table ${result.tableName}: ${schema}, on-demand (PAY_PER_REQUEST), ${ttl}; it is ACTIVE`
    : `table ${result.tableName} exists with the store's schema (${schema}); ${ttl}; it is ACTIVE`
}
