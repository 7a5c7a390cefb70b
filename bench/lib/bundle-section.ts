/**
 * The "Bundle and cold import" part of the report: the typical SQS handler of each
 * implementation bundled and imported cold, every example handler bundled, and which of our
 * source files the typical handler carries (esbuild's metafile).
 */
import { median } from './stats.js'
import { bundleHandler, coldImportMs, fileSpecifier, REQUIRE_BANNER, type BundleResult } from './bundle.js'
import { bundleExamples, examplesTable, packagesLine, sourcesTable, unusedFeatures } from './example-bundles.js'
import { fmt, ratio, table } from './report.js'

/**
 * What a user's cold start pays: on Lambda the SDK sits on the runtime's disk, not in memory, so
 * a cold start loads the whole bundle and every SDK module it imports. Nothing is preloaded.
 */
export const COLD_START = 'cold start (whole bundle and the SDK modules it imports, nothing preloaded)'
/** Secondary: beyond the SDK modules both bundles import (each side still loads the SDK modules only it imports). */
export const SDK_FIRST = 'beyond the SDK modules both import'
/**
 * Secondary, and biased: every SDK module either bundle imports is preloaded, so the time of
 * an SDK module only one side imports (Powertools' @aws-sdk/util-dynamodb) drops out of its figure.
 */
export const EITHER_FIRST = 'after every SDK module either imports'
/** Beyond what both share, the SDK and @middy/core (bundled with @middy/core external). */
export const SHARED_FIRST = 'beyond the SDK and @middy/core'
const SDK_ALONE = '@aws-sdk/client-dynamodb alone'

const sdkImports = (b: BundleResult | undefined): string[] => (b?.externalImports ?? []).filter((i) => i.startsWith('@aws-sdk/'))

export interface BundleFigures { bundles: BundleResult[], imports: Map<string, number[]> }

/** A subject of the cold imports: a name, what it imports, and what is imported before it (untimed). */
type Subject = [string, string, readonly string[]]

/**
 * Cold import times by subject: each typical handler as is and after the SDK; and, bundled with
 * `@middy/core` left out, each handler after the SDK and @middy/core; and the SDK alone.
 */
const coldImports = (bundles: BundleResult[], count: number): Map<string, number[]> => {
  const typical = bundles.filter((b) => b.implementation === 'ours' || b.implementation === 'theirs')
  const [ours, theirs] = [sdkImports(typical[0]), sdkImports(typical[1])]
  const both = ours.filter((m) => theirs.includes(m))
  const either = [...new Set([...ours, ...theirs])].sort()
  const lite = bundles.find((b) => b.implementation === 'ours-lite')
  const subjects: Subject[] = [
    ...typical.map((b): Subject => [`${b.implementation} ${COLD_START}`, fileSpecifier(b.file), []]),
    ...(lite === undefined ? [] : [[`ours-lite ${COLD_START}`, fileSpecifier(lite.file), []] as Subject]),
    ...typical.map((b): Subject => [`${b.implementation} ${SDK_FIRST}`, fileSpecifier(b.file), both]),
    ...typical.map((b): Subject => [`${b.implementation} ${EITHER_FIRST}`, fileSpecifier(b.file), either]),
    ...bundles.filter((b) => String(b.implementation).endsWith(' (middy external)'))
      .map((b): Subject => [`${String(b.implementation).replace(' (middy external)', '')} ${SHARED_FIRST}`, fileSpecifier(b.file), [...both, '@middy/core']]),
    [SDK_ALONE, '@aws-sdk/client-dynamodb', []]
  ]
  const times = new Map<string, number[]>(subjects.map(([name]) => [name, []]))
  for (let i = 0; i < count; i++) {
    // Alternate, and reverse the order every other time, so nobody always goes first.
    const order = i % 2 === 0 ? subjects : [...subjects].reverse()
    for (const [name, specifier, preload] of order) times.get(name)?.push(coldImportMs(specifier, preload))
  }
  return times
}

export const medianOf = (imports: Map<string, number[]>, subject: string): number => median(imports.get(subject) ?? [])

/** Bundles, imports, and prints the section through `say`. */
export const bundleSection = async (coldImportCount: number, say: (text?: string) => void): Promise<BundleFigures> => {
  const handlers = ['ours', 'theirs', 'ours-http', 'theirs-http']
  const bundles = [
    ...await Promise.all(handlers.map(async (h) => await bundleHandler(h))),
    ...await Promise.all(handlers.map(async (h) => await bundleHandler(h, `${h} (middy external)`, ['@middy/core']))),
    // The README's SQS handler on `@aws-lite/client` (bundled with it: the Lambda runtime does not have it).
    await bundleHandler('ours-lite', 'ours-lite', [], REQUIRE_BANNER)
  ]
  const imports = coldImports(bundles, coldImportCount)
  const [ours, theirs, oursHttp, theirsHttp] = bundles as [BundleResult, BundleResult, BundleResult, BundleResult]
  say('## Bundle and cold import')
  say()
  say('esbuild, minified ESM, platform node, `@aws-sdk/*` external (the Lambda runtime has it). The typical SQS handler: ' +
    '`bench/handlers/ours.ts` (`perRecord` + `DynamoDBStore`) and `bench/handlers/theirs.ts` (`makeIdempotent` + `BatchProcessor`). ' +
    `Cold import: a fresh \`node\` per import, ${coldImportCount} per subject, alternating; time of the dynamic import measured inside the child. ` +
    `"${COLD_START}" is what a function's cold start follows: on Lambda the SDK is on the runtime's disk, not preloaded, so the import loads it, ` +
    `and each side pays for the SDK modules it imports (ours: ${sdkImports(ours).join(', ')}; theirs: ${sdkImports(theirs).join(', ')}). ` +
    `"${SDK_FIRST}": the child first imports (untimed) the SDK modules both import, so what is timed is the bundle and the SDK modules only it imports. ` +
    `"${EITHER_FIRST}" also preloads the SDK modules only one side imports, which takes their time out of that side's figure: shown for comparison, not a user's cold start.`)
  say()
  say(`The typical HTTP handler: \`bench/handlers/ours-http.ts\` and \`theirs-http.ts\` (the middleware of each, with http-error-handler and http-json-body-parser). "${SHARED_FIRST}": bundled with @middy/core external, and both imported first (untimed).`)
  say()
  say(table(['subject', 'bytes', 'gzip bytes', 'cold import median ms', 'min', 'max'],
    [...imports].map(([name, ms]) => {
      const b = name.endsWith(SHARED_FIRST)
        ? bundles.find((x) => x.implementation === `${name.replace(` ${SHARED_FIRST}`, '')} (middy external)`)
        : name === SDK_ALONE ? undefined : bundles.find((x) => x.implementation === name.split(' ')[0])
      return [name, b === undefined ? '—' : String(b.bytes), b === undefined ? '—' : String(b.gzipBytes), fmt(median(ms), 1), fmt(Math.min(...ms), 1), fmt(Math.max(...ms), 1)]
    })))
  say()
  say(`Ratios ours/theirs: bytes ${fmt(ratio(ours.bytes, theirs.bytes), 3)}, gzip ${fmt(ratio(ours.gzipBytes, theirs.gzipBytes), 3)}, ` +
    `**${COLD_START} ${fmt(ratio(medianOf(imports, `ours ${COLD_START}`), medianOf(imports, `theirs ${COLD_START}`)), 3)}**, ` +
    `cold import ${SDK_FIRST} ${fmt(ratio(medianOf(imports, `ours ${SDK_FIRST}`), medianOf(imports, `theirs ${SDK_FIRST}`)), 3)}, ` +
    `cold import ${EITHER_FIRST} ${fmt(ratio(medianOf(imports, `ours ${EITHER_FIRST}`), medianOf(imports, `theirs ${EITHER_FIRST}`)), 3)}, ` +
    `cold import ${SHARED_FIRST} ${fmt(ratio(medianOf(imports, `ours ${SHARED_FIRST}`), medianOf(imports, `theirs ${SHARED_FIRST}`)), 3)}`)
  say()
  const lite = bundles.find((b) => b.implementation === 'ours-lite') as BundleResult
  say(`With \`@aws-lite/client\` (\`bench/handlers/ours-lite.ts\`, the client bundled, made at import), ours-lite / theirs with its SDK: ` +
    `bytes ${lite.bytes} / ${theirs.bytes} = ${fmt(ratio(lite.bytes, theirs.bytes), 3)}, ` +
    `**${COLD_START} ${fmt(medianOf(imports, `ours-lite ${COLD_START}`), 1)} / ${fmt(medianOf(imports, `theirs ${COLD_START}`), 1)} ms = ` +
    `${fmt(ratio(medianOf(imports, `ours-lite ${COLD_START}`), medianOf(imports, `theirs ${COLD_START}`)), 3)}**. ` +
    `Its run-time imports (metafile): ${lite.externalImports.join(', ')}; an \`@aws-sdk/*\` one there is the store's dynamic import, made only for an SDK client.`)
  say()
  say(`HTTP handler, ours/theirs: bytes ${oursHttp.bytes} / ${theirsHttp.bytes} = ${fmt(ratio(oursHttp.bytes, theirsHttp.bytes), 3)}, ` +
    `cold import ${SHARED_FIRST} ${fmt(ratio(medianOf(imports, `ours-http ${SHARED_FIRST}`), medianOf(imports, `theirs-http ${SHARED_FIRST}`)), 3)}`)
  say()
  say(`By package (metafile, bytes left in the minified output): ours: ${packagesLine(ours)}; theirs: ${packagesLine(theirs)}.`)
  say()
  say('### Each example handler')
  say()
  say(examplesTable(await bundleExamples()))
  say()
  say('### Our files in the typical SQS handler (esbuild metafile)')
  say()
  say(sourcesTable(ours))
  say()
  const unused = unusedFeatures(ours)
  const unusedBytes = unused.reduce((sum, u) => sum + u.bytes, 0)
  say(unused.length === 0
    ? 'The typical handler carries no file of a feature it does not use.'
    : `**Finding**: the typical handler uses none of ${unused.map((u) => `${u.feature} (${u.bytes} bytes)`).join(', ')}, yet carries them: ` +
      `${unusedBytes} bytes in all; without them it would be ${ours.bytes - unusedBytes} bytes, ${fmt(ratio(ours.bytes - unusedBytes, theirs.bytes), 3)} of Powertools'.`)
  say()
  return { bundles, imports }
}
