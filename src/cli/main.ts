import { readFile } from 'node:fs/promises'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { IdempotencyError } from '../errors.js'
import { STATUSES } from '../stores/operator/table.js'
import type { RecordStatus } from '../stores/store.js'
import { namespaceProblem } from '../keys/namespace.js'
import { IdempotencyConfigError } from '../errors.js'
import { asFlags, openBackend, TABLE_FLAGS, UsageError, type Backend, type StoreFlags } from './backend.js'
import { inspectText, keysText, listText, releaseText } from './format.js'
import { keysOf } from './keys.js'
import { HELP } from './help.js'
import { timeoutMs as timeoutMsOf } from './deadline.js'

/** Exit codes: 0 done, 1 refused or not found (or the store failed), 2 usage. */
const DONE = 0
const REFUSED = 1
const USAGE = 2

const STORE_OPTIONS = {
  table: { type: 'string' },
  redis: { type: 'string' },
  prefix: { type: 'string' },
  'key-attr': { type: 'string' },
  'sort-key-attr': { type: 'string' },
  'sort-key-value': { type: 'string' },
  'status-attr': { type: 'string' },
  'expiry-attr': { type: 'string' },
  'in-progress-expiry-attr': { type: 'string' },
  'lease-token-attr': { type: 'string' },
  'payload-hash-attr': { type: 'string' },
  'response-data-attr': { type: 'string' },
  'error-attr': { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' }
} as const satisfies ParseArgsConfig['options']

const COMMAND_OPTIONS = {
  list: { ...STORE_OPTIONS, status: { type: 'string' } },
  inspect: STORE_OPTIONS,
  release: { ...STORE_OPTIONS, force: { type: 'boolean' } },
  key: { event: { type: 'string' }, key: { type: 'string' }, namespace: { type: 'string' }, tenant: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }
} as const satisfies Record<string, ParseArgsConfig['options']>

type Command = keyof typeof COMMAND_OPTIONS
const isCommand = (name: string | undefined): name is Command => name !== undefined && Object.hasOwn(COMMAND_OPTIONS, name)

interface Io { out: (text: string) => void, err: (text: string) => void, progress?: (text: string) => void }

/** Runs one command line (the arguments after the bin's name); resolves the exit code. */
export const run = async (argv: readonly string[], io: Io): Promise<number> => {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP.main)
    return name === undefined ? USAGE : DONE
  }
  if (!isCommand(name)) {
    io.err(`middy-idempotency: unknown command ${JSON.stringify(name)}\n\n${HELP.main}`)
    return USAGE
  }
  let parsed
  try {
    parsed = parseArgs({ args: [...rest], options: COMMAND_OPTIONS[name], allowPositionals: true, strict: true })
  } catch (error) {
    io.err(`middy-idempotency ${name}: ${parseProblem(error)}\n\n${HELP[name]}`)
    return USAGE
  }
  const values = parsed.values as Record<string, string | boolean | undefined>
  if (values.help === true) {
    io.out(HELP[name])
    return DONE
  }
  const json = values.json === true
  try {
    return name === 'key' ? await keyCommand(values, parsed.positionals, json, io) : await storeCommand(name, values, parsed.positionals, json, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`middy-idempotency ${name}: ${error.message}\n\n${HELP[name]}`)
      return USAGE
    }
    const { name: kind = 'Error', message: said = String(error), operation, key } = (error ?? {}) as { name?: string, message?: string, operation?: string, key?: string }
    // A DynamoDB store's messages name its options: here they are flags.
    const message = typeof values.table === 'string' ? asFlags(said) : said
    // One shape, whichever store failed: name, the store operation and key when there are, message.
    if (json) io.out(JSON.stringify({ error: { name: kind, ...(operation === undefined ? {} : { operation }), ...(key === undefined ? {} : { key }), message } }))
    io.err(`middy-idempotency ${name}: ${error instanceof IdempotencyError ? message : `${kind}: ${message}`}`)
    return REFUSED
  }
}

const storeCommand = async (name: Exclude<Command, 'key'>, values: Record<string, string | boolean | undefined>, positionals: string[], json: boolean, io: Io): Promise<number> => {
  const status = values.status as string | undefined
  if (status !== undefined && !STATUSES.includes(status as RecordStatus)) throw new UsageError(`--status is one of ${STATUSES.join(', ')}, not ${JSON.stringify(status)}`)
  const wanted = name === 'list' ? 0 : 1
  if (positionals.length !== wanted) throw new UsageError(wanted === 0 ? `takes no KEY (got ${positionals.join(' ')})` : 'takes one KEY: the stored key, namespace#sha256 (see the key command)')
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
    return await commands[name](backend, { key: positionals[0] as string, status: status as RecordStatus | undefined, force: values.force === true, json }, io)
  } finally {
    await backend.close()
  }
}

interface Asked { key: string, status: RecordStatus | undefined, force: boolean, json: boolean }

const commands: Record<Exclude<Command, 'key'>, (backend: Backend, asked: Asked, io: Io) => Promise<number>> = {
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
      io.err(`middy-idempotency list: ${skipped} ${skipped === 1 ? 'item that is not a record was' : 'items that are not records were'} skipped ` +
        '(another library\'s records or other rows in a shared table, or records whose attribute names differ: pass the store\'s --*-attr flags)')
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
  release: async (backend, { key, force, json }, io) => {
    const result = await backend.release(key, force)
    const text = releaseText(key, result)
    if (json) io.out(JSON.stringify({ key, ...result }))
    else if (result.released) io.out(text)
    if (!result.released) {
      if (!json) io.err(text)
      return REFUSED
    }
    return DONE
  }
}

const keyCommand = async (values: Record<string, string | boolean | undefined>, positionals: string[], json: boolean, io: Io): Promise<number> => {
  const file = values.event
  if (typeof file !== 'string') throw new UsageError('--event FILE is required: a JSON file of the event (or of one record)')
  if (positionals.length > 0) throw new UsageError(`takes no positional argument (got ${positionals.join(' ')})`)
  let event: unknown
  try {
    event = JSON.parse(await readFile(file, 'utf8'))
  } catch (error) {
    throw new UsageError(`--event ${file}: ${(error as Error).message}`)
  }
  const problem = typeof values.namespace === 'string' ? namespaceProblem(values.namespace) : undefined
  if (problem !== undefined) throw new UsageError(`--namespace: ${problem}`)
  let keys
  try {
    keys = keysOf(event, {
      ...(typeof values.key === 'string' ? { keyPath: values.key } : {}),
      ...(typeof values.namespace === 'string' ? { namespace: values.namespace } : {}),
      ...(typeof values.tenant === 'string' ? { tenant: values.tenant } : {})
    })
  } catch (error) {
    // A path that cannot be compiled is how the command was called, not the event.
    if (error instanceof IdempotencyConfigError) throw new UsageError(`--key: ${error.message}`)
    throw error
  }
  io.out(json ? JSON.stringify(keys) : keysText(keys))
  return 'records' in keys && keys.records.some((r) => 'error' in r) ? REFUSED : DONE
}

/** parseArgs' refusal in a line of our own: its text quotes the option unevenly and suggests `--`. */
const parseProblem = (error: unknown): string => {
  const { code, message = String(error) } = (error ?? {}) as { code?: string, message?: string }
  const option = /'(-[^' ]+)/.exec(message)?.[1] ?? ''
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option}`
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return /argument missing/.test(message) ? `option ${option} needs a value` : `option ${option} takes no value`
  return message
}
