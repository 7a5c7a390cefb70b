import { beforeAll, expect, test } from '@jest/globals'
import { execFileSync } from 'node:child_process'

let files: string[] = []
let name: string | undefined

beforeAll(() => {
  // `npm pack` runs `prepack` (the build) and lists what would be published.
  const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { encoding: 'utf8' })
  const [pack] = JSON.parse(output.slice(output.indexOf('['))) as Array<{ name: string, files: Array<{ path: string }> }>
  files = pack?.files.map((f) => f.path) ?? []
  name = pack?.name
}, 60_000)

test('npm pack ships only the built code, its types, the README and the licence', () => {
  expect(name).toBe('middy-idempotency')
  for (const file of files) expect(file).toMatch(/^(package\.json|README\.md|LICENSE|dist\/.+\.(js|d\.ts))$/)
  expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/stores/dynamodb-store.js']))
})

test('the built entry point exports the public contract', async () => {
  const built = await import('../../dist/index.js' as string) as Record<string, unknown>
  expect(Object.keys(built).sort()).toEqual([
    'DynamoDBStore', 'IdempotencyConfigError', 'IdempotencyError', 'IdempotencyFailedError', 'IdempotencyHeldBackError',
    'IdempotencyInProgressError', 'IdempotencyKeyError', 'IdempotencyLeaseLostError', 'IdempotencyPayloadMismatchError', 'IdempotencyResponseError',
    'IdempotencyStoreError', 'IdempotencyTransactError', 'MemoryStore', 'default', 'idempotency', 'perRecord'
  ])
  expect(built.default).toBe(built.idempotency)
})
