import type { RecordView, ReleaseResult } from '../stores/operator/records.js'
import type { KeysOf } from './keys.js'

/** Columns padded to their widest cell; the last one is not padded. */
export const table = (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string => {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]): string => cells.map((cell, i) => i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number)).join('  ').trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}

const leaseOf = (view: RecordView): string => view.leaseUntil === undefined ? '-' : `${view.leaseUntil} (${view.leaseLive === true ? 'live' : 'lapsed'})`

const outcomeOf = (view: RecordView): string =>
  view.result !== undefined ? view.result : view.error !== undefined ? `${view.error.name}: ${view.error.message}` : ''

export const listText = (views: readonly RecordView[]): string => views.length === 0
  ? 'no records'
  : table(['KEY', 'STATUS', 'EXPIRES', 'LEASE', 'RESULT / ERROR'],
      views.map((v) => [v.key, v.status, `${v.expiresAt}${v.expired ? ' (expired)' : ''}`, leaseOf(v), outcomeOf(v).slice(0, 60)]))

export const inspectText = (view: RecordView): string => [
  `key:          ${view.key}`,
  `status:       ${view.status}`,
  `expires:      ${view.expiresAt} (${view.expired ? 'expired: ' : ''}${view.protecting ? 'protects its key' : 'no longer protects its key: the next claim takes it over'})`,
  `lease:        ${leaseOf(view)}`,
  `lease token:  ${view.leaseToken ?? '-'}`,
  `payload hash: ${view.payloadHash ?? '-'}`,
  ...(view.result === undefined ? [] : [`result:       ${view.result}`]),
  ...(view.error === undefined ? [] : [`error:        ${view.error.name}: ${view.error.message}${view.error.code === undefined ? '' : ` (code ${view.error.code})`}`])
].join('\n')

const REFUSALS: Record<Exclude<ReleaseResult, { released: true }>['reason'], string> = {
  'not-found': 'no record under this key: nothing to release',
  completed: 'the record is COMPLETED: its result is what a redelivery must get, so it is never released',
  'live-lease': 'the record is IN_PROGRESS and its lease is live: its work may still be running. Release it anyway with --force (a redelivery may then run it twice)',
  changed: 'the record changed since it was read (completed, or claimed again): nothing was removed'
}

export const releaseText = (key: string, result: ReleaseResult): string => {
  if (!result.released) return `not released: ${REFUSALS[result.reason]}${result.record === undefined ? '' : `\n${inspectText(result.record)}`}`
  const { record } = result
  const what = record.status === 'FAILED'
    ? `FAILED record (error ${record.error?.name ?? 'Error'}: ${record.error?.message ?? ''})`
    : `IN_PROGRESS record (lease ${leaseOf(record)})`
  return `released ${key}: removed its ${what}; the next delivery runs it`
}

export const keysText = (keys: KeysOf): string => 'key' in keys
  ? keys.key
  : table(['RECORD', 'KEY'], keys.records.map((r) => [r.id, 'key' in r ? r.key : `(no key: ${r.error})`]))
