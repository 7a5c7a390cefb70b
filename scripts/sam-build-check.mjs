#!/usr/bin/env node
/**
 * Builds every esbuild function of a SAM template the way `sam build` does, against this
 * package as npm would deliver it, then loads each handler with nothing beside it but the AWS
 * SDK, as the Lambda Node.js runtime would. The SAM CLI is a Python program; this repeats its
 * steps so that CI can run them with npm alone:
 * 1. `npm pack` this package (its `prepack` builds dist/); the app's `middy-idempotency`
 *    dependency is pointed at that tarball, in a copy of the app.
 * 2. Per CodeUri, what the builder does in its scratch copy: copy the folder without
 *    `node_modules`, `.aws-sam` and `.git`, then `npm install -q --no-audit --no-save
 *    --unsafe-perm --omit=dev` (`npm ci` only with `UseNpmCi` and a lockfile).
 * 3. Per function, esbuild from the copy's `node_modules/.bin`, else from PATH, with the
 *    arguments of sam-template.mjs, run in the copy.
 * 4. The handler's file (`<file>.js|.mjs|.cjs` of `Handler`) imported in a fresh folder holding
 *    it and `node_modules/@aws-sdk/*` only; its export must be a function.
 *
 * Usage: node scripts/sam-build-check.mjs [template] [--keep]
 * (default template: examples/sam-app/template.yaml). Exits 1 naming each function that fails.
 */
import { spawnSync } from 'node:child_process'
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath, URL } from 'node:url'
import { esbuildArgs, esbuildFunctions, parseTemplate } from './sam-template.mjs'

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)))
const args = process.argv.slice(2)
const keep = args.includes('--keep')
const templatePath = resolve(args.find((a) => !a.startsWith('--')) ?? join(repo, 'examples/sam-app/template.yaml'))
const work = mkdtempSync(join(tmpdir(), 'sam-build-check-'))
const EXCLUDED = new Set(['.aws-sam', '.git', 'node_modules'])

const run = (command, commandArgs, cwd) => {
  const env = { ...process.env, npm_config_update_notifier: 'false' }
  const result = spawnSync(command, commandArgs, { cwd, encoding: 'utf8', env })
  if (result.error !== undefined) {
    throw new Error(`${command} could not be run: ${result.error.message}`, { cause: result.error })
  }
  if (result.status !== 0) {
    const output = (result.stderr || result.stdout).trim()
    throw new Error(`${basename(command)} ${commandArgs.join(' ')} exited ${result.status}:\n${output}`)
  }
  return result.stdout
}

const pack = () => {
  const destination = join(work, 'pack')
  mkdirSync(destination)
  console.log(`npm pack (prepack builds dist/) in ${repo}`)
  run('npm', ['pack', '--pack-destination', destination, '--silent'], repo)
  const tarball = readdirSync(destination).find((name) => name.endsWith('.tgz'))
  if (tarball === undefined) throw new Error('npm pack wrote no tarball')
  return join(destination, tarball)
}

/** The builder's scratch copy of a CodeUri with its production dependencies installed. */
const install = (codeDir, scratch, tarball, useNpmCi) => {
  cpSync(codeDir, scratch, { recursive: true, filter: (source) => !EXCLUDED.has(basename(source)) })
  const manifestPath = join(scratch, 'package.json')
  if (!existsSync(manifestPath)) {
    console.log(`  no package.json in ${codeDir}: bundled without installing (as sam build does)`)
    return undefined
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  if (manifest.dependencies?.['middy-idempotency'] !== undefined) {
    manifest.dependencies['middy-idempotency'] = `file:${tarball}`
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`)
    console.log('  middy-idempotency → the packed tarball')
  } else {
    console.log('  (package.json has no middy-idempotency dependency)')
  }
  const locked = ['package-lock.json', 'npm-shrinkwrap.json'].some((name) => existsSync(join(codeDir, name)))
  const command = useNpmCi === true && locked
    ? ['ci']
    : ['install', '-q', '--no-audit', '--no-save', '--unsafe-perm', '--omit=dev']
  console.log(`  npm ${command.join(' ')}`)
  run('npm', command, scratch)
  return manifest
}

/** Where the builder finds esbuild: the copy's node_modules/.bin, then PATH. */
const findEsbuild = (scratch) => {
  const local = join(scratch, 'node_modules/.bin/esbuild')
  if (existsSync(local)) return { path: local, from: "the app's dependencies" }
  const onPath = (process.env.PATH ?? '').split(delimiter)
    .map((dir) => join(dir, 'esbuild'))
    .find((file) => existsSync(file))
  if (onPath !== undefined) return { path: onPath, from: 'PATH' }
  // sam build would stop here ("Cannot find esbuild"); a global install is what users have then.
  return {
    path: join(repo, 'node_modules/.bin/esbuild'),
    from: 'neither the app nor PATH: standing in for a global install, this repository\'s'
  }
}

/** A folder like a Lambda task root: the build output and, as the runtime provides, the AWS SDK v3. */
const taskRoot = (artifacts, dir) => {
  cpSync(artifacts, dir, { recursive: true })
  const sdk = join(repo, 'node_modules/@aws-sdk')
  mkdirSync(join(dir, 'node_modules/@aws-sdk'), { recursive: true })
  for (const name of readdirSync(sdk)) {
    symlinkSync(realpathSync(join(sdk, name)), join(dir, 'node_modules/@aws-sdk', name), 'dir')
  }
}

const IMPORT = `
const [file, name] = process.argv.slice(1)
const { pathToFileURL } = await import('node:url')
const module = await import(pathToFileURL(file).href)
if (typeof module[name] !== 'function') {
  const exported = Object.keys(module).join(', ') || 'none'
  console.error(\`export \${name} is \${typeof module[name]}, not a function (exports: \${exported})\`)
  process.exit(1)
}
// At once: a handler may have started connecting to its store, which is not there.
process.exit(0)
`

const importHandler = (fn, dir) => {
  const lastDot = fn.handler.lastIndexOf('.')
  const [file, exportName] = [fn.handler.slice(0, lastDot), fn.handler.slice(lastDot + 1)]
  const found = ['.js', '.mjs', '.cjs'].map((ext) => join(dir, file + ext)).find((path) => existsSync(path))
  if (found === undefined) {
    throw new Error(`Handler ${fn.handler}: no ${file}.js, .mjs or .cjs in the build output ` +
      `(${readdirSync(dir).join(', ')})`)
  }
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', IMPORT, found, exportName], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', AWS_LAMBDA_FUNCTION_NAME: fn.name, LAMBDA_TASK_ROOT: dir }
  })
  if (result.status !== 0) {
    const output = (result.stderr || result.stdout).trim()
    throw new Error(`import of ${basename(found)} failed (exit ${result.status ?? result.signal}):\n${output}`)
  }
  return { file: basename(found), bytes: statSync(found).size }
}

const main = () => {
  console.log(`sam-build-check: ${templatePath}`)
  const functions = esbuildFunctions(parseTemplate(readFileSync(templatePath, 'utf8')))
  if (functions.length === 0) throw new Error('no AWS::Serverless::Function with BuildMethod: esbuild in the template')
  const tarball = pack()
  const installs = new Map()
  const failures = []
  for (const fn of functions) {
    try {
      const codeDir = resolve(dirname(templatePath), fn.codeUri)
      const installKey = `${codeDir} ${fn.properties.use_npm_ci === true}`
      if (!installs.has(installKey)) {
        // sam build installs in each function's own copy; the copies of one CodeUri are alike.
        console.log(`CodeUri ${codeDir}`)
        const scratch = join(work, `code-${installs.size}`)
        installs.set(installKey, { scratch, manifest: install(codeDir, scratch, tarball, fn.properties.use_npm_ci) })
      }
      const { scratch, manifest } = installs.get(installKey)
      const artifacts = join(work, 'build', fn.name)
      const esbuild = findEsbuild(scratch)
      const command = esbuildArgs(fn, scratch, artifacts, manifest)
      try {
        run(esbuild.path, command, scratch)
      } catch (error) {
        throw new Error(`esbuild from ${esbuild.from}: ${error.message}`, { cause: error })
      }
      const dir = join(work, 'run', fn.name)
      taskRoot(artifacts, dir)
      const { file, bytes } = importHandler(fn, dir)
      console.log(`ok   ${fn.name}: ${file} (${Math.round(bytes / 1024)} KB, esbuild from ${esbuild.from}) ` +
        `loads beside the AWS SDK only and exports ${fn.handler.split('.').pop()} as a function ` +
        `(${fn.runtime ?? 'no Runtime'})`)
    } catch (error) {
      failures.push(fn.name)
      console.error(`FAIL ${fn.name}: ${error.message}`)
    }
  }
  return failures
}

let code = 1
try {
  const failures = main()
  if (failures.length === 0) code = 0
  else console.error(`\nsam-build-check: ${failures.length} function(s) failed: ${failures.join(', ')}`)
} catch (error) {
  console.error(`sam-build-check failed: ${error.message}`)
} finally {
  if (keep) console.log(`kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
process.exitCode = code
