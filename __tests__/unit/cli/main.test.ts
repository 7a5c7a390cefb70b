import { afterAll, beforeAll, expect, test } from '@jest/globals'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../../../src/cli/main.js'
import { HELP } from '../../../src/cli/help.js'

/** The command line's own refusals: nothing here reaches a store. */
const cli = async (...argv: string[]): Promise<{ code: number, out: string, err: string }> => {
  let out = ''
  let err = ''
  const code = await run(argv, { out: (text) => { out += `${text}\n` }, err: (text) => { err += `${text}\n` } })
  return { code, out, err }
}

let dir = ''
let event = ''
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-'))
  event = join(dir, 'event.json')
  writeFileSync(event, JSON.stringify({ body: { x: 1 } }))
})
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })

test('key --namespace with a # is refused as the middleware refuses it: a usage error', async () => {
  const { code, err } = await cli('key', '--event', event, '--namespace', 'a#b')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency key: --namespace: namespace must not contain '#' \(got 'a#b'\)/)
})

test('key --key with a malformed path is a usage error naming the path', async () => {
  const { code, err } = await cli('key', '--event', event, '--key', 'body..x')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency key: --key: .*"body\.\.x" is malformed/)
})

test('an unknown option is named cleanly, with the command\'s usage', async () => {
  const { code, err } = await cli('list', '--table', 'T', '--bogus')
  expect(code).toBe(2)
  expect(err).toBe(`middy-idempotency list: unknown option --bogus\n\n${HELP.list}\n`)
})

test('an option missing its value is named cleanly', async () => {
  const { code, err } = await cli('list', '--table')
  expect(code).toBe(2)
  expect(err).toBe(`middy-idempotency list: option --table needs a value\n\n${HELP.list}\n`)
})

test('the top-level help says that list, inspect and release need a store', async () => {
  const { out } = await cli('--help')
  for (const command of ['list', 'inspect', 'release']) expect(out).toMatch(new RegExp(`^  ${command} .*\\(--table NAME \\| --redis URL\\)`, 'm'))
})

test('every attribute option of DynamoDBStore has a flag, in each store command\'s help', async () => {
  for (const command of ['list', 'inspect', 'release'] as const) {
    for (const flag of ['--key-attr', '--sort-key-attr', '--sort-key-value', '--status-attr', '--expiry-attr', '--in-progress-expiry-attr', '--lease-token-attr', '--payload-hash-attr', '--response-data-attr', '--error-attr']) {
      expect(HELP[command]).toContain(flag)
    }
  }
})

test('attribute flags are for --table only', async () => {
  const { code, err } = await cli('list', '--redis', 'redis://127.0.0.1:1', '--expiry-attr', 'expiration')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency list: --expiry-attr is for --table/)
})

test('attribute flags naming one attribute twice are a usage error naming both flags', async () => {
  const { code, err } = await cli('list', '--table', 'T', '--lease-token-attr', 'payloadHash')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency list: --lease-token-attr and --payload-hash-attr both name attribute 'payloadHash'/)
})

test('--version prints the package\'s version, exit 0', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  expect(await cli('--version')).toEqual({ code: 0, out: `${version}\n`, err: '' })
})

test('a misspelt command gets a suggestion, as a misspelt option does', async () => {
  const { code, err } = await cli('lst', '--table', 'T')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency: unknown command "lst" \(did you mean "list"\?\)\n/)
  const option = await cli('release', 'k', '--table', 'T', '--frce')
  expect(option.code).toBe(2)
  expect(option.err).toMatch(/^middy-idempotency release: unknown option --frce \(did you mean --force\?\)\n/)
})

test('a command far from every command is named, with the list of commands', async () => {
  const { code, err } = await cli('purge')
  expect(code).toBe(2)
  expect(err).toMatch(/^middy-idempotency: unknown command "purge"\n\nUsage: middy-idempotency <command>/)
})
