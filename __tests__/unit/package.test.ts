import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

/**
 * What `npm pack` publishes, and how consumers load it: an ESM project, a CommonJS project
 * (`require` of ESM, Node >= 22.12), and their type checks. One real `npm pack` (it
 * runs `prepack`, the build) into a temporary folder, unpacked as `node_modules/middy-idempotency`
 * of a throwaway project whose peers are links to this repository's: offline and fast.
 */

let files: string[] = []
let name: string | undefined
let project = ''
let scratch = ''

const repoModules = realpathSync('node_modules')
const link = (pkg: string): void => {
  const target = join(project, 'node_modules', pkg)
  mkdirSync(dirname(target), { recursive: true })
  symlinkSync(realpathSync(join(repoModules, pkg)), target, 'dir')
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'middy-idempotency-pack-'))
  const output = execFileSync('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', scratch], { encoding: 'utf8' })
  const [pack] = JSON.parse(output.slice(output.indexOf('['))) as Array<{ name: string, filename: string, files: Array<{ path: string }> }>
  files = pack?.files.map((f) => f.path) ?? []
  name = pack?.name
  project = join(scratch, 'consumer')
  const installed = join(project, 'node_modules', 'middy-idempotency')
  mkdirSync(installed, { recursive: true })
  execFileSync('tar', ['-xzf', join(scratch, pack?.filename ?? ''), '-C', installed, '--strip-components=1'])
  for (const pkg of ['@middy/core', '@aws-sdk/client-dynamodb', '@types/aws-lambda', '@types/node']) link(pkg)
  // No "type": CommonJS, as most older projects are.
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
}, 120_000)

afterAll(() => { if (scratch !== '') rmSync(scratch, { recursive: true, force: true }) })

test('npm pack ships only the built code, its types, the README and the licence', () => {
  expect(name).toBe('middy-idempotency')
  for (const file of files) expect(file).toMatch(/^(package\.json|README\.md|LICENSE|dist\/.+\.(js|d\.ts))$/)
  expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/dynamodb.js', 'dist/dynamodb.d.ts', 'dist/redis.js', 'dist/redis.d.ts']))
})

/** Every package a file under src/ imports (type-only imports aside), statically or with `import()`, by name. */
const importedPackages = (): Set<string> => {
  const found = new Set<string>()
  for (const file of readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join('src', file), 'utf8')
    for (const [, typeOnly, pkg] of source.matchAll(/^import (type )?[^']*?from '((?:@[^/']+\/)?[^./'][^/']*)/gm)) {
      if (typeOnly === undefined && pkg !== undefined && !pkg.startsWith('node:')) found.add(pkg)
    }
    for (const [, pkg] of source.matchAll(/\bimport\('((?:@[^/']+\/)?[^./'][^/']*)/g)) {
      if (pkg !== undefined && !pkg.startsWith('node:')) found.add(pkg)
    }
  }
  return found
}

test('the AWS SDK is an optional peer: every SDK package the code loads is a peer marked optional, so a Redis-only install pulls none of it', () => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { peerDependencies?: Record<string, string>, peerDependenciesMeta?: Record<string, { optional?: boolean }>, dependencies?: Record<string, string> }
  const sdk = [...importedPackages()].filter((pkg) => pkg.startsWith('@aws-sdk/'))
  expect(sdk).toContain('@aws-sdk/client-dynamodb')
  for (const pkg of sdk) {
    expect([pkg, manifest.peerDependencies?.[pkg]]).toEqual([pkg, expect.any(String)])
    expect([pkg, manifest.peerDependenciesMeta?.[pkg]?.optional]).toEqual([pkg, true])
  }
  expect(Object.keys(manifest.dependencies ?? {}).filter((pkg) => pkg.startsWith('@aws-sdk/'))).toEqual([])
})

test('the description names every event source and store the package works with', () => {
  const { description = '', keywords = [] } = JSON.parse(readFileSync('package.json', 'utf8')) as { description?: string, keywords?: string[] }
  for (const name of ['SQS', 'Kinesis', 'DynamoDB Streams', 'Kafka', 'DynamoDB', 'Redis']) expect([name, description.includes(name)]).toEqual([name, true])
  for (const keyword of ['kafka', 'redis', 'dynamodb', 'sqs', 'kinesis']) expect(keywords).toContain(keyword)
})

const publicExports = [
  'HttpServerErrorResponse', 'IdempotencyConfigError', 'IdempotencyError', 'IdempotencyFailedError', 'IdempotencyHeldBackError',
  'IdempotencyInProgressError', 'IdempotencyKeyError', 'IdempotencyLeaseLostError', 'IdempotencyPayloadMismatchError', 'IdempotencyResponseError',
  'IdempotencyStoreError', 'IdempotencyTransactError', 'MemoryStore', 'default', 'idempotency', 'makeIdempotent',
  'perRecord'
]

test('the built entry point exports the public contract', async () => {
  const built = await import('../../dist/index.js' as string) as Record<string, unknown>
  expect(Object.keys(built).sort()).toEqual(publicExports)
  expect(built.default).toBe(built.idempotency)
})

describe('consumers of the packed tarball', () => {
  /** Loads the package as `how` does, builds a middleware with it, and prints what it saw. */
  const probe = (how: string): string => `
    const m = ${how}
    const middleware = m.idempotency({ store: new m.MemoryStore(), logger: false })
    console.log(JSON.stringify({ keys: Object.keys(m).sort(), sameDefault: m.default === m.idempotency, hooks: Object.keys(middleware).sort() }))
  `
  const run = (file: string, source: string): unknown => {
    writeFileSync(join(project, file), source)
    return JSON.parse(execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8' }))
  }
  const expected = { keys: publicExports, sameDefault: true, hooks: ['after', 'before', 'onError'] }

  test(`a CommonJS project can require('middy-idempotency') on Node ${process.versions.node} (the dist has no top-level await)`, () => {
    // Node >= 22.12 loads ES modules with require() unless they use top-level await
    // (ERR_REQUIRE_ASYNC_MODULE): https://nodejs.org/api/modules.html#loading-ecmascript-modules-using-require
    // require() of an ES module with a default export also marks the namespace __esModule, for interop.
    expect(run('consumer.cjs', probe("require('middy-idempotency')"))).toEqual({ ...expected, keys: [...publicExports, '__esModule'].sort() })
  })

  test('an ESM project can import it', () => {
    expect(run('consumer.mjs', probe("await import('middy-idempotency')"))).toEqual(expected)
  })

  const storeProbe = (how: string): string => `
    const m = ${how}
    const store = new m.DynamoDBStore({ tableName: 'IdempotencyStore', clientConfig: { region: 'us-east-1' } })
    console.log(JSON.stringify({ keys: Object.keys(m).filter((k) => k !== '__esModule').sort(), limits: store.limits }))
  `
  const storeExpected = {
    keys: ['DynamoDBStore', 'createTable', 'inspectRecord', 'listRecords', 'releaseRecord', 'transactions'],
    limits: {
      maxStoreRequests: 1250, maxResponseBytes: 398 * 1024, maxReadKeys: 100, transaction: { maxWrites: 99, maxBytes: 4 * 1024 * 1024 }
    }
  }

  test('middy-idempotency/redis, its own entry point, is imported and required alike, and loads no AWS SDK module', () => {
    const probe = (how: string, sdkLoaded: string): string => `
      const m = ${how}
      const store = new m.RedisStore({ client: { sendCommand: async () => null } })
      console.log(JSON.stringify({ keys: Object.keys(m).filter((k) => k !== '__esModule').sort(), limits: store.limits, sdkLoaded: ${sdkLoaded} }))
    `
    const expected = {
      keys: ['RedisStore', 'inspectRecord', 'listRecords', 'releaseRecord'],
      limits: { maxResponseBytes: 1024 * 1024, maxReadKeys: 1000, maxStoreRequests: 1000 },
      sdkLoaded: false
    }
    expect(run('redis.mjs', probe("await import('middy-idempotency/redis')", 'false'))).toEqual(expected)
    // CommonJS shows every module it loaded in require.cache, ES modules loaded by require() included.
    expect(run('redis.cjs', probe("require('middy-idempotency/redis')", "Object.keys(require.cache).some((path) => path.includes('@aws-sdk'))"))).toEqual(expected)
  })

  test('middy-idempotency/store is imported and required alike, and loads the store contract only', () => {
    // Every module resolved, ES modules included (require.cache holds only what require() itself loaded):
    // https://nodejs.org/api/module.html#moduleregisterhooksoptions
    const probe = (load: string): string => `
      const loaded = []
      require('node:module').registerHooks({ resolve: (specifier, context, next) => {
        const resolved = next(specifier, context)
        loaded.push(resolved.url)
        return resolved
      } })
      ;(async () => {
        const m = ${load}
        const lapsed = { key: 'k', status: 'IN_PROGRESS', expiry: 9, inProgressExpiry: 1000, leaseToken: 't' }
        const keys = Object.keys(m).filter((k) => k !== '__esModule').sort()
        const files = loaded.filter((u) => u.includes('/node_modules/')).map((u) => u.split('/node_modules/')[1])
        const claimable = m.isClaimable(lapsed, 2000)
        console.log(JSON.stringify({ keys, claimable, loaded: [...new Set(files)].sort() }))
      })()
    `
    const loaded = ['middy-idempotency/dist/store.js', 'middy-idempotency/dist/stores/store.js']
    const expected = { keys: ['isClaimable'], claimable: true, loaded }
    expect(run('store-entry.cjs', probe("require('middy-idempotency/store')"))).toEqual(expected)
    expect(run('store-import.cjs', probe("await import('middy-idempotency/store')"))).toEqual(expected)
  })

  test('middy-idempotency/dynamodb, its own entry point, is imported and required alike', () => {
    expect(run('store.mjs', storeProbe("await import('middy-idempotency/dynamodb')"))).toEqual(storeExpected)
    expect(run('store.cjs', storeProbe("require('middy-idempotency/dynamodb')"))).toEqual(storeExpected)
  })

  test('middy-idempotency/batch and middy-idempotency/event, entry points of their own, are imported and required alike, each with its idempotency', () => {
    const entryProbe = (how: string): string => `
      const m = ${how}
      const { MemoryStore } = require('middy-idempotency')
      const middleware = m.idempotency({ store: new MemoryStore(), logger: false })
      console.log(JSON.stringify({ keys: Object.keys(m).filter((k) => k !== '__esModule').sort(), sameDefault: m.default === m.idempotency, hooks: Object.keys(middleware).sort() }))
    `
    const hooks = ['after', 'before', 'onError']
    for (const [entry, keys] of [['middy-idempotency/batch', ['default', 'idempotency', 'perRecord']], ['middy-idempotency/event', ['default', 'idempotency']]] as const) {
      const expected = { keys, sameDefault: true, hooks }
      const name = entry.split('/')[1] ?? ''
      expect(run(`${name}.cjs`, entryProbe(`require('${entry}')`))).toEqual(expected)
      expect(run(`${name}.mjs`, `import { createRequire } from 'node:module'\nconst require = createRequire(import.meta.url)\n` + entryProbe(`await import('${entry}')`))).toEqual(expected)
    }
  })

  const consumer = (kind: 'import' | 'require'): string => `
    import { idempotency, MemoryStore, type IdempotencyOptions } from 'middy-idempotency'
    import type { SQSEvent } from 'aws-lambda'
    // A ${kind} of the package, typed by the event.
    const options: IdempotencyOptions<SQSEvent> = { store: new MemoryStore(), key: (record) => record.messageId }
    export const middleware = idempotency(options)
    // @ts-expect-error an SQS record has no orderId
    export const wrong = idempotency<SQSEvent>({ store: new MemoryStore(), key: (record) => record.orderId })
  `
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

  test('a Redis-only TypeScript project, without the AWS SDK installed, typechecks against the package\'s declarations (skipLibCheck off)', () => {
    const redisOnly = join(scratch, 'redis-only')
    mkdirSync(join(redisOnly, 'node_modules'), { recursive: true })
    // A copy, not a link: TypeScript would resolve the SDK from beside the link's target.
    cpSync(join(project, 'node_modules', 'middy-idempotency'), join(redisOnly, 'node_modules', 'middy-idempotency'), { recursive: true })
    for (const pkg of ['@middy/core', '@types/aws-lambda', '@types/node']) {
      mkdirSync(dirname(join(redisOnly, 'node_modules', pkg)), { recursive: true })
      symlinkSync(realpathSync(join(repoModules, pkg)), join(redisOnly, 'node_modules', pkg), 'dir')
    }
    writeFileSync(join(redisOnly, 'package.json'), JSON.stringify({ name: 'redis-only', private: true, type: 'module' }))
    writeFileSync(join(redisOnly, 'index.ts'), `
      import { idempotency, perRecord } from 'middy-idempotency'
      import { RedisStore } from 'middy-idempotency/redis'
      export const middleware = idempotency({ store: new RedisStore({ client: { sendCommand: async () => null } }) })
      export const handler = perRecord(async () => 'ok')
    `)
    const args = [tsc, '--noEmit', '--strict', '--target', 'es2022', '--types', 'node', '--module', 'node16', '--moduleResolution', 'node16', '--skipLibCheck', 'false', '--skipDefaultLibCheck', 'index.ts']
    let output = ''
    try { execFileSync(process.execPath, args, { cwd: redisOnly, encoding: 'utf8' }) } catch (error) { output = String((error as { stdout?: string }).stdout) }
    expect(output).toBe('')
  }, 60_000)

  // `module: node16` describes Node 16, which cannot require an ES module: a CommonJS file is
  // checked with `node20` (TypeScript >= 5.9; `nodenext` since 5.8), with the same node16 resolution.
  // The declaration files themselves are checked once (the first case); the others skip that
  // check of node_modules, which costs more than the rest. TypeScript's own lib files are never
  // checked (--skipDefaultLibCheck): they are not ours, and checking them took a third of the time.
  test.each([
    ['moduleResolution node16 (module node16), ESM', ['--module', 'node16', '--moduleResolution', 'node16', '--skipLibCheck', 'false', '--skipDefaultLibCheck'], ['esm.mts']],
    ['moduleResolution node16 (module node20), ESM and CommonJS', ['--module', 'node20', '--moduleResolution', 'node16', '--skipLibCheck'], ['esm.mts', 'cjs.cts']],
    ['moduleResolution bundler (module preserve), ESM and CommonJS', ['--module', 'preserve', '--moduleResolution', 'bundler', '--skipLibCheck'], ['esm.ts', 'cjs.cts']]
  ])('a TypeScript consumer typechecks with %s', (_, flags, sources) => {
    for (const source of sources) writeFileSync(join(project, source), consumer(source.startsWith('cjs') ? 'require' : 'import'))
    const args = [tsc, '--noEmit', '--strict', '--target', 'es2022', '--types', 'node', ...flags, ...sources]
    expect(() => execFileSync(process.execPath, args, { cwd: project, encoding: 'utf8' })).not.toThrow()
  }, 60_000)
})
