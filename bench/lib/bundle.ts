/**
 * Bundle size and cold import. Each handler in `bench/handlers/` is bundled as a Lambda
 * deployment would be (esbuild, minified ESM for Node, `@aws-sdk/*` left external because
 * the Lambda runtime provides it), then imported in fresh `node` processes, alternating
 * between the implementations, timing the dynamic import from inside the child.
 */
import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import type { Implementation } from './tables.js'

/** One input file of a bundle and the bytes it left in the (minified) output, from esbuild's metafile. */
export interface BundledSource { path: string, bytes: number }

export interface BundleResult {
  implementation: Implementation | string
  file: string
  bytes: number
  gzipBytes: number
  sources: BundledSource[]
  /** What the bundle still imports at run time (packages left external, `node:` built-ins), from the metafile. */
  externalImports: string[]
}

// Inside the repository, so the external @aws-sdk/* packages resolve from its node_modules.
const outDir = fileURLToPath(new URL('../results/bundles/', import.meta.url))

/**
 * Bundles `bench/handlers/<handler>.ts` as `name`.mjs. `external` adds packages left out of
 * the bundle: `@middy/core`, to time what a handler adds beyond what both implementations share.
 */
export const bundleHandler = async (handler: Implementation | string, name: string = handler, external: string[] = [], banner?: string): Promise<BundleResult> =>
  await bundleEntry(name, fileURLToPath(new URL(`../handlers/${handler}.ts`, import.meta.url)), external, banner)

/**
 * A `require` for the CommonJS packages of an ESM bundle (`@aws-lite/client` requires Node's
 * built-ins at run time, which esbuild's ESM output cannot do alone): the banner esbuild's
 * documentation gives for it. https://esbuild.github.io/api/#banner
 */
export const REQUIRE_BANNER = "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);"

/** esbuild's options for a Lambda bundle of `entry`, as users deploy one: `@middy/*` bundled, `@aws-sdk/*` and `external` left out. */
export const lambdaBuildOptions = (entry: string, external: string[] = []) => ({
  entryPoints: [entry],
  bundle: true,
  minify: true,
  format: 'esm' as const,
  platform: 'node' as const,
  target: 'node20',
  external: ['@aws-sdk/*', ...external],
  // The repository's, whose paths resolve `middy-idempotency` to src/: the example app's own
  // tsconfig.json (the nearest to its files) is for its users, who install the package.
  tsconfig: fileURLToPath(new URL('../../tsconfig.json', import.meta.url)),
  logLevel: 'silent' as const
})

/** Bundles `entry` as `name`.mjs; the metafile says which files ended up in it, and how much of each. */
export const bundleEntry = async (name: string, entry: string, external: string[] = [], banner?: string): Promise<BundleResult> => {
  mkdirSync(outDir, { recursive: true })
  const file = `${outDir}${name}.mjs`
  const { metafile } = await build({ ...lambdaBuildOptions(entry, external), ...(banner === undefined ? {} : { banner: { js: banner } }), metafile: true, outfile: file })
  const content = readFileSync(file)
  const output = Object.values(metafile.outputs)[0]
  const sources = Object.entries(output?.inputs ?? {}).map(([path, { bytesInOutput }]) => ({ path, bytes: bytesInOutput })).filter((s) => s.bytes > 0)
  const externalImports = [...new Set((output?.imports ?? []).filter((i) => i.external === true).map((i) => i.path))].sort()
  return { implementation: name, file, bytes: content.byteLength, gzipBytes: gzipSync(content, { level: 9 }).byteLength, sources, externalImports }
}

/**
 * Milliseconds to import `specifier` in a fresh node process, measured inside it. `preload`
 * is imported (untimed) before: the SDK, and `@middy/core`, which every consumer loads anyway,
 * so that what remains is what the bundle itself costs on top of them.
 */
export const coldImportMs = (specifier: string, preload: readonly string[] = []): number => {
  const script = preload.map((p) => `await import('${p}'); `).join('') +
    'const t0 = performance.now(); await import(process.argv[1]); ' +
    'process.stdout.write(String(performance.now() - t0))'
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script, specifier], {
    encoding: 'utf8',
    cwd: outDir,
    // Lambda sets the region and the role's credentials; `@aws-lite/client` reads them when it is made.
    env: { ...process.env, NODE_NO_WARNINGS: '1', IDEMPOTENCY_TABLE: 'IdempotencyStore', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench' }
  })
  const ms = Number(result.stdout)
  if (result.status !== 0 || !Number.isFinite(ms)) throw new Error(`cold import of ${specifier} failed: ${result.stderr}`)
  return ms
}

export const fileSpecifier = (file: string): string => pathToFileURL(file).href
