#!/usr/bin/env node
/**
 * The tarball npm would publish, checked as users receive it:
 * 1. `npm pack` (its `prepack` builds dist/) into a scratch folder;
 * 2. its contents: no tests, bench, examples, scripts or sources; no source map of a file it does
 *    not ship; every target of `exports` (and `bin`, `main`, `types`) present;
 * 3. publint (package.json against the files) and `@arethetypeswrong/cli` (types as each
 *    module resolution sees them), both on that tarball, offline.
 *
 * Usage: node scripts/check-package.mjs [--keep]   (--keep leaves the scratch folder)
 * Exits 1 naming each problem.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'

/** What never belongs in the tarball: the repository's own tooling and tests. */
const NOT_SHIPPED = [
  [
    /^(src|__tests__|bench|examples|scripts|docs|coverage|\.ci|\.github)\//,
    'a folder of the repository, not of the package'
  ],
  [/(^|\/)[^/]+\.(test|spec)\.[cm]?[jt]s$/, 'a test'],
  [/\.tgz$/, 'a packed tarball'],
  [/(^|\/)(tsconfig[^/]*\.json|jest\.config\.[^/]+|eslint\.config\.[^/]+)$/, 'a build configuration']
]

/** Every file path `exports` (any condition, any depth), `bin`, `main` and `types` point to. */
export const exportTargets = (pkg) => {
  const targets = []
  const walk = (value) => {
    if (typeof value === 'string') targets.push(value)
    else if (Array.isArray(value)) value.forEach(walk)
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk)
  }
  walk(pkg.exports)
  walk(pkg.bin)
  for (const field of ['main', 'types', 'typings', 'module']) {
    if (typeof pkg[field] === 'string') targets.push(pkg[field])
  }
  return [...new Set(targets.map((target) => posix.normalize(target).replace(/^\.\//, '')))]
}

/**
 * The problems of a tarball's file list: `files` as `npm pack --json` lists them (paths inside
 * the package), `read(path)` their text (for source maps). An empty list means it is fine.
 */
export const tarballProblems = (pkg, files, read) => {
  const problems = []
  const shipped = new Set(files)
  for (const file of files) {
    const rule = NOT_SHIPPED.find(([pattern]) => pattern.test(file))
    if (rule !== undefined) problems.push(`${file} is ${rule[1]}: it must not be published`)
  }
  for (const target of exportTargets(pkg)) {
    if (target.includes('*')) {
      const escapedParts = target.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      const pattern = new RegExp(`^${escapedParts.join('.+')}$`)
      if (!files.some((file) => pattern.test(file))) {
        problems.push(`exports target ${target} matches no file of the tarball`)
      }
    } else if (!shipped.has(target)) problems.push(`exports target ${target} is not in the tarball`)
  }
  for (const map of files.filter((file) => file.endsWith('.map'))) {
    let sources
    try {
      sources = JSON.parse(read(map)).sources ?? []
    } catch (error) {
      problems.push(`${map} is not a readable source map (${error.message})`)
      continue
    }
    const missing = sources
      .map((source) => posix.normalize(posix.join(posix.dirname(map), source)))
      .filter((source) => !shipped.has(source))
    if (missing.length > 0) problems.push(`${map} maps files the tarball does not ship: ${missing.join(', ')}`)
    const generated = map.slice(0, -'.map'.length)
    if (!shipped.has(generated)) problems.push(`${map} is the map of ${generated}, which the tarball does not ship`)
  }
  for (const file of files.filter((f) => /\.([cm]?js|d\.[cm]?ts)$/.test(f))) {
    const url = /[#@] sourceMappingURL=(\S+)\s*$/.exec(read(file))?.[1]
    if (url === undefined || url.startsWith('data:')) continue
    if (!shipped.has(posix.normalize(posix.join(posix.dirname(file), url)))) {
      problems.push(`${file} points to a source map the tarball does not ship (${url})`)
    }
  }
  return problems
}

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')

const run = (command, args, options = {}) => {
  const env = { ...process.env, npm_config_update_notifier: 'false' }
  const result = spawnSync(command, args, { cwd: repo, encoding: 'utf8', env, ...options })
  if (result.error !== undefined) {
    throw new Error(`${command} could not be run: ${result.error.message}`, { cause: result.error })
  }
  return result
}

/** A package's command-line entry, run with this Node (no npx: nothing is fetched at CI time). */
const bin = (pkgName, binName) => {
  // Its package.json by path: neither package's `exports` exports it.
  const manifestPath = join(repo, 'node_modules', pkgName, 'package.json')
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  const entry = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[binName]
  return join(dirname(manifestPath), entry)
}

const main = () => {
  const keep = process.argv.includes('--keep')
  const scratch = mkdtempSync(join(tmpdir(), 'check-package-'))
  let failed = false
  try {
    const packed = run('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', scratch])
    if (packed.status !== 0) throw new Error(`npm pack exited ${packed.status}:\n${packed.stderr}`)
    const [pack] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))
    const tarball = join(scratch, pack.filename)
    const files = pack.files.map((f) => f.path)
    const unpacked = join(scratch, 'package')
    if (run('tar', ['-xzf', tarball, '-C', scratch]).status !== 0) throw new Error(`could not unpack ${tarball}`)
    const pkg = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8'))

    console.log(`check-package: ${pack.filename}, ${files.length} files, ${pack.size} bytes packed`)
    const problems = tarballProblems(pkg, files, (file) => readFileSync(join(unpacked, file), 'utf8'))
    for (const problem of problems) console.error(`  contents: ${problem}`)
    if (problems.length === 0) {
      console.log('  contents: no tests, bench, sources or stray maps; every exports target present')
    }
    failed ||= problems.length > 0

    // publint reads the tarball itself (no second pack); its warnings fail the check too.
    const publint = run(process.execPath, [bin('publint', 'publint'), 'run', tarball, '--strict'], { stdio: 'inherit' })
    failed ||= publint.status !== 0

    // The resolutions the README documents: node16/nodenext and bundler. (node10, TypeScript's
    // `moduleResolution: node`, predates `exports` and cannot see the store subpaths.) A CommonJS
    // caller resolving to the ES module is the design: Node 22.12+ require()s it,
    // https://nodejs.org/api/modules.html#loading-ecmascript-modules-using-require
    const attw = run(process.execPath, [
      bin('@arethetypeswrong/cli', 'attw'), tarball,
      '--profile', 'node16',
      '--no-definitely-typed',
      '--ignore-rules', 'cjs-resolves-to-esm',
      '--format', 'table-flipped',
      '--no-color'
    ], { stdio: 'inherit' })
    failed ||= attw.status !== 0
  } finally {
    if (keep) console.log(`check-package: kept ${scratch}`)
    else rmSync(scratch, { recursive: true, force: true })
  }
  if (failed) {
    console.error('check-package: the tarball has problems (above)')
    process.exit(1)
  }
  console.log('check-package: ok')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
