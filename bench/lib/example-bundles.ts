/**
 * Bytes only for what is used (issue 10, item 3). Each Lambda handler in `examples/sam-app/src/` (a file
 * that exports `handler`; the demo is a script, not a handler) is bundled as it would be
 * deployed, and esbuild's metafile of the typical SQS handler (`bench/handlers/ours.ts`:
 * `perRecord` + `DynamoDBStore`) says which of our source files it carries. A handler that
 * uses neither `transact`, nor streams, nor whole-event/HTTP mode should carry none of the
 * files that implement them; those found are listed as a finding, not hidden.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { bundleEntry, type BundleResult } from './bundle.js'
import { fmt, table } from './report.js'

const examplesDir = fileURLToPath(new URL('../../examples/sam-app/src/', import.meta.url))

/** The source files that implement a feature the typical SQS handler does not use. */
const FEATURES: Array<{ feature: string, files: RegExp }> = [
  { feature: 'transact', files: /(^|\/)src\/stores\/dynamodb\/(transaction|marshal)\.ts$/ },
  { feature: 'streams and Kafka', files: /(^|\/)src\/sources\/(kinesis|dynamodb-streams|kafka)\.ts$/ },
  { feature: 'whole event / HTTP', files: /(^|\/)src\/(middleware\/event-hooks|lifecycle\/whole-event|http\/[^/]+)\.ts$/ },
  { feature: 'MemoryStore', files: /(^|\/)src\/stores\/memory-store\.ts$/ }
]

const featureOf = (path: string): string | undefined => FEATURES.find((f) => f.files.test(path))?.feature

/** `examples/sam-app/src/*.ts` files that export a Lambda `handler`. */
export const exampleHandlers = (): string[] =>
  readdirSync(examplesDir)
    .filter((name) => name.endsWith('.ts') && /export\s+const\s+handler\b/.test(readFileSync(`${examplesDir}${name}`, 'utf8')))
    .sort()

export const bundleExamples = async (): Promise<BundleResult[]> => {
  const results: BundleResult[] = []
  for (const name of exampleHandlers()) results.push(await bundleEntry(`example-${name.replace(/\.ts$/, '')}`, `${examplesDir}${name}`))
  return results
}

/** A file of this package's src/ (the example app's own src/ is the handler's). */
const isOurs = (path: string): boolean => /(^|\/)src\//.test(path) && !/(^|\/)examples\//.test(path)
const ours = (sources: BundleResult['sources']): BundleResult['sources'] => sources.filter((s) => isOurs(s.path))
const byPackage = (sources: BundleResult['sources']): Map<string, number> => {
  const sizes = new Map<string, number>()
  for (const s of sources) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s.path)?.[1] ?? (isOurs(s.path) ? 'middy-idempotency (src/)' : 'the handler itself')
    sizes.set(pkg, (sizes.get(pkg) ?? 0) + s.bytes)
  }
  return sizes
}

export const examplesTable = (examples: BundleResult[]): string => table(
  ['example handler', 'bytes', 'gzip bytes', 'of which src/', 'feature files in it (transact, streams, whole event/HTTP, MemoryStore)'],
  examples.map((b) => {
    const carried = [...new Set(ours(b.sources).map((s) => featureOf(s.path)).filter((f) => f !== undefined))]
    return [`examples/sam-app/src/${b.implementation.replace(/^example-/, '')}.ts`, String(b.bytes), String(b.gzipBytes),
      String(ours(b.sources).reduce((sum, s) => sum + s.bytes, 0)), carried.join(', ') || '—']
  })
)

/** Our files in a bundle, largest first, each with the feature it belongs to when the handler does not use it. */
export const sourcesTable = (bundle: BundleResult): string => table(
  ['file in the bundle', 'bytes in output (minified)', 'feature it implements, unused by this handler'],
  ours(bundle.sources).sort((a, b) => b.bytes - a.bytes).map((s) => [s.path.replace(/^.*?(src\/)/, '$1'), String(s.bytes), featureOf(s.path) ?? ''])
)

export const packagesLine = (bundle: BundleResult): string =>
  [...byPackage(bundle.sources)].sort((a, b) => b[1] - a[1]).map(([pkg, bytes]) => `${pkg} ${fmt(bytes / 1024, 1)} KB`).join(', ')

/** The unused features a bundle carries, with their bytes: what a split would save. */
export const unusedFeatures = (bundle: BundleResult): Array<{ feature: string, bytes: number }> => {
  const sizes = new Map<string, number>()
  for (const s of ours(bundle.sources)) {
    const feature = featureOf(s.path)
    if (feature !== undefined) sizes.set(feature, (sizes.get(feature) ?? 0) + s.bytes)
  }
  return [...sizes].map(([feature, bytes]) => ({ feature, bytes }))
}
