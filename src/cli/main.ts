import { readFile } from 'node:fs/promises'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { IdempotencyError } from '../errors.js'
import { namespaceProblem } from '../keys/prepare.js'
import { IdempotencyConfigError } from '../errors.js'
import { asFlags, UsageError } from './backend.js'
import { awsSetupProblem } from './aws-setup.js'
import { keysText } from './format.js'
import { DONE, REFUSED, storeCommand, USAGE, type Io } from './store-commands.js'
import { keysOf } from './keys.js'
import { HELP } from './help.js'
import { closest } from '../unknown-options.js'

/** The version of the installed package: its package.json, two folders up from src/cli or dist/cli. */
const packageVersion = async (): Promise<string> =>
  (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

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
  release: {
    ...STORE_OPTIONS, force: { type: 'boolean' }, completed: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' }
  },
  'create-table': STORE_OPTIONS,
  key: {
    event: { type: 'string' },
    key: { type: 'string' },
    namespace: { type: 'string' },
    tenant: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' }
  }
} as const satisfies Record<string, ParseArgsConfig['options']>

type Command = keyof typeof COMMAND_OPTIONS
const isCommand = (name: string | undefined): name is Command =>
  name !== undefined && Object.hasOwn(COMMAND_OPTIONS, name)

/** Runs one command line (the arguments after the bin's name); resolves the exit code. */
export const run = async (argv: readonly string[], io: Io): Promise<number> => {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP.main)
    return name === undefined ? USAGE : DONE
  }
  if (name === '--version') {
    io.out(await packageVersion())
    return DONE
  }
  if (!isCommand(name)) {
    const nearest = closest(name, Object.keys(COMMAND_OPTIONS))
    const hint = nearest === undefined ? '' : ` (did you mean ${JSON.stringify(nearest)}?)`
    io.err(`middy-idempotency: unknown command ${JSON.stringify(name)}${hint}\n\n${HELP.main}`)
    return USAGE
  }
  let parsed
  try {
    parsed = parseArgs({ args: [...rest], options: COMMAND_OPTIONS[name], allowPositionals: true, strict: true })
  } catch (error) {
    io.err(`middy-idempotency ${name}: ${parseProblem(error, Object.keys(COMMAND_OPTIONS[name]))}\n\n${HELP[name]}`)
    return USAGE
  }
  const values = parsed.values as Record<string, string | boolean | undefined>
  if (values.help === true) {
    io.out(HELP[name])
    return DONE
  }
  const json = values.json === true
  try {
    return name === 'key'
      ? await keyCommand(values, parsed.positionals, json, io)
      : await storeCommand(name, values, parsed.positionals, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`middy-idempotency ${name}: ${error.message}\n\n${HELP[name]}`)
      return USAGE
    }
    // The AWS SDK's own words for a missing region or credentials name no variable to set: ours do.
    const setup = typeof values.table === 'string' ? awsSetupProblem(error) : undefined
    if (setup !== undefined) {
      io.err(`middy-idempotency ${name}: ${setup}`)
      return USAGE
    }
    const { name: kind = 'Error', message: said = String(error), operation, key } =
      (error ?? {}) as { name?: string, message?: string, operation?: string, key?: string }
    // A DynamoDB store's messages name its options: here they are flags.
    const message = typeof values.table === 'string' ? asFlags(said) : said
    // One shape, whichever store failed: name, the store operation and key when there are, message.
    if (json) {
      io.out(JSON.stringify({
        error: {
          name: kind, ...(operation === undefined ? {} : { operation }), ...(key === undefined ? {} : { key }), message
        }
      }))
    }
    io.err(`middy-idempotency ${name}: ${error instanceof IdempotencyError ? message : `${kind}: ${message}`}`)
    return REFUSED
  }
}

const keyCommand = async (
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  json: boolean,
  io: Io
): Promise<number> => {
  const file = values.event
  if (typeof file !== 'string') {
    throw new UsageError('--event FILE is required: a JSON file of the event (or of one record)')
  }
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
const parseProblem = (error: unknown, known: readonly string[]): string => {
  const { code, message = String(error) } = (error ?? {}) as { code?: string, message?: string }
  const option = /'(-[^' ]+)/.exec(message)?.[1] ?? ''
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const nearest = option.startsWith('--') ? closest(option.slice(2), known) : undefined
    return `unknown option ${option}${nearest === undefined ? '' : ` (did you mean --${nearest}?)`}`
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return /argument missing/.test(message) ? `option ${option} needs a value` : `option ${option} takes no value`
  }
  return message
}
