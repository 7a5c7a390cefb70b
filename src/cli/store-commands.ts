import { isRecordStatus, RECORD_STATUSES, type RecordStatus } from '../stores/store.js'
import { openBackend, TABLE_FLAGS, UsageError, type Backend, type StoreFlags } from './backend.js'
import { timeoutMs as timeoutMsOf } from './deadline.js'
import { confirmText, createTableText, inspectText, listText, refusalText, releaseText } from './format.js'

/** Exit codes: 0 done, 1 refused or not found (or the store failed), 2 usage. */
export const DONE = 0
export const REFUSED = 1
export const USAGE = 2

/** Where a command writes, and (at a terminal only) how it asks a person a yes/no question. */
export interface Io {
  out: (text: string) => void
  err: (text: string) => void
  progress?: (text: string) => void
  /** Asks `question` and resolves the answer; absent when no one is at a terminal to answer. */
  confirm?: (question: string) => Promise<boolean>
}

export type StoreCommand = 'list' | 'inspect' | 'release' | 'create-table'
type Values = Record<string, string | boolean | undefined>

interface Asked {
  key: string
  status: RecordStatus | undefined
  force: boolean
  completed: boolean
  yes: boolean
  json: boolean
}

/** Runs a command on a store: its flags checked first, then the store opened for it alone. */
export const storeCommand = async (
  name: StoreCommand,
  values: Values,
  positionals: string[],
  io: Io
): Promise<number> => {
  const status = values.status as string | undefined
  if (status !== undefined && !isRecordStatus(status)) {
    throw new UsageError(`--status is one of ${RECORD_STATUSES.join(', ')}, not ${JSON.stringify(status)}`)
  }
  const wanted = name === 'inspect' || name === 'release' ? 1 : 0
  if (positionals.length !== wanted) {
    throw new UsageError(wanted === 0
      ? `takes no KEY (got ${positionals.join(' ')})`
      : 'takes one KEY: the stored key, namespace#sha256 (see the key command)')
  }
  const asked: Asked = {
    key: positionals[0] as string,
    status: status as RecordStatus | undefined,
    force: values.force === true,
    completed: values.completed === true,
    yes: values.yes === true,
    json: values.json === true
  }
  if (asked.completed && asked.force) {
    throw new UsageError('--completed and --force do not go together: --force is for a live IN_PROGRESS lease')
  }
  if (!asked.completed && asked.yes) throw new UsageError('--yes confirms --completed, and is for it alone')
  // Checked before any request: a script that forgot --yes learns it without touching the store.
  if (asked.completed && !asked.yes && io.confirm === undefined) {
    throw new UsageError('--completed needs --yes when no one is at a terminal to confirm ' +
      '(its work runs again on the next delivery)')
  }
  if (name === 'create-table' && typeof values.redis === 'string') {
    throw new UsageError('creates a DynamoDB table: --table NAME, not --redis (a Redis store needs no schema)')
  }
  const timeoutMs = timeoutMsOf(values.timeout as string | undefined)
  if (timeoutMs === undefined) {
    throw new UsageError(`--timeout takes a number of seconds greater than 0, not ${JSON.stringify(values.timeout)}`)
  }
  const flags: StoreFlags = { tableOptions: {}, timeoutMs }
  for (const flag of ['table', 'redis', 'prefix'] as const) {
    const value = values[flag]
    if (typeof value === 'string') flags[flag] = value
  }
  for (const [flag, option] of Object.entries(TABLE_FLAGS)) {
    const value = values[flag]
    if (typeof value === 'string') (flags.tableOptions as Record<string, string>)[option] = value
  }
  const backend = await openBackend(flags)
  try {
    return await commands[name](backend, asked, io)
  } finally {
    await backend.close()
  }
}

const commands: Record<StoreCommand, (backend: Backend, asked: Asked, io: Io) => Promise<number>> = {
  list: async (backend, { status, json }, io) => {
    let skipped = 0
    const views = await backend.list({
      ...(status === undefined ? {} : { status }),
      onPage: (read: number, skippedSoFar: number) => {
        skipped = skippedSoFar
        io.progress?.(`scanned ${read} records…`)
      }
    })
    io.progress?.('')
    io.out(json ? JSON.stringify(views) : listText(views))
    // On stderr, so that --json stays one document: what was left out, and the likely why.
    if (skipped > 0) {
      const items = skipped === 1 ? 'item that is not a record was' : 'items that are not records were'
      io.err(`middy-idempotency list: ${skipped} ${items} skipped ` +
        '(another library\'s records or other rows in a shared table, ' +
        'or records whose attribute names differ: pass the store\'s --*-attr flags)')
    }
    return DONE
  },
  inspect: async (backend, { key, json }, io) => {
    const view = await backend.inspect(key)
    if (view === undefined) {
      if (json) io.out(JSON.stringify(null))
      io.err(`middy-idempotency inspect: no record under ${key}`)
      return REFUSED
    }
    io.out(json ? JSON.stringify(view) : inspectText(view))
    return DONE
  },
  release: async (backend, asked, io) => {
    const { key, force, completed, yes, json } = asked
    if (!completed || yes) return said(key, await backend.release(key, { force, completed }), json, io)
    // At a terminal: the record is shown, and only that record is removed once confirmed (its token fences the delete).
    const view = await backend.inspect(key)
    if (view === undefined) return said(key, { released: false, reason: 'not-found' }, json, io)
    if (view.status !== 'COMPLETED') {
      return said(key, { released: false, reason: 'not-completed', record: view }, json, io)
    }
    if (!await (io.confirm as NonNullable<Io['confirm']>)(confirmText(view))) {
      if (json) io.out(JSON.stringify({ key, released: false, reason: 'not-confirmed' }))
      else io.err(refusalText('not-confirmed'))
      return REFUSED
    }
    const released = await backend.release(key, {
      completed, ...(view.leaseToken === undefined ? {} : { leaseToken: view.leaseToken })
    })
    return said(key, released, json, io)
  },
  'create-table': async (backend, { json }, io) => {
    if (backend.createTable === undefined) throw new UsageError('creates a DynamoDB table: --table NAME')
    const result = await backend.createTable()
    io.out(json ? JSON.stringify(result) : createTableText(result))
    return DONE
  }
}

/** What a release did, on stdout (removed, or --json) or stderr (refused); its exit code. */
const said = (key: string, result: Awaited<ReturnType<Backend['release']>>, json: boolean, io: Io): number => {
  const text = releaseText(key, result)
  if (json) io.out(JSON.stringify({ key, ...result }))
  else if (result.released) io.out(text)
  if (!result.released) {
    if (!json) io.err(text)
    return REFUSED
  }
  return DONE
}
