/**
 * Bundle and cold import of the two Redis SQS handlers (`handlers/ours-redis.ts`,
 * `handlers/theirs-redis.ts`), as `bundle.ts` does for the DynamoDB ones: esbuild, minified
 * ESM, `@aws-sdk/*` external, and the Redis client (`redis`, `@redis/*`) external too, since
 * both load the same one. Cold import is timed as is, and, bundled with `@middy/core` external,
 * after `redis` and `@middy/core` were imported and a first client created (untimed) in the
 * same child: what each handler adds beyond what both load. The first `createClient` of the
 * `redis` package costs tens of milliseconds (it builds the commands of its modules), more than
 * either library; both handlers make one, so it is paid before the clock starts. The metafile says what each bundle still imports at run time:
 * the Redis handler of ours must import no `@aws-sdk/*` module.
 */
import { writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { bundleHandler, coldImportMs, fileSpecifier, type BundleResult } from './bundle.js'
import { fmt, ratio, table } from './report.js'
import { median } from './stats.js'

const REDIS_CLIENT = ['redis', '@redis/*']
export const REDIS_BEYOND = 'beyond the redis client and @middy/core'
const IMPLEMENTATIONS = ['ours-redis', 'theirs-redis'] as const

export interface RedisBundleFigures {
  bundles: BundleResult[]
  /** Cold import milliseconds by subject: `ours-redis`, `ours-redis beyond redis and @middy/core` ... */
  imports: Map<string, number[]>
}

const isSdk = (path: string): boolean => path.startsWith('@aws-sdk/')

/** The `@aws-sdk/*` modules a bundle imports or carries (none, for a handler that loads no SDK). */
export const sdkModulesOf = (bundle: BundleResult | undefined): string[] => bundle === undefined
  ? []
  : [...bundle.externalImports.filter(isSdk), ...bundle.sources.map((s) => s.path).filter((p) => /node_modules\/@aws-sdk\//.test(p))]

/** A module that loads what both Redis handlers load anyway and makes the first client, imported untimed before the "beyond" subjects. */
const sharedPreload = (besides: string): string => {
  const file = `${dirname(besides)}/redis-shared-preload.mjs`
  writeFileSync(file, "import { createClient } from 'redis'\nimport '@middy/core'\ncreateClient({ url: process.env.REDIS_URL })\n")
  return fileSpecifier(file)
}

export const redisBundles = async (coldImports: number): Promise<RedisBundleFigures> => {
  const bundles = [
    ...await Promise.all(IMPLEMENTATIONS.map(async (h) => await bundleHandler(h, h, REDIS_CLIENT))),
    ...await Promise.all(IMPLEMENTATIONS.map(async (h) => await bundleHandler(h, `${h} (middy external)`, [...REDIS_CLIENT, '@middy/core'])))
  ]
  const preload = [sharedPreload((bundles[0] as BundleResult).file)]
  const subjects: Array<[string, string, readonly string[]]> = IMPLEMENTATIONS.flatMap((h) => [
    [h, fileSpecifier((bundles.find((b) => b.implementation === h) as BundleResult).file), []],
    [`${h} ${REDIS_BEYOND}`, fileSpecifier((bundles.find((b) => b.implementation === `${h} (middy external)`) as BundleResult).file), preload]
  ] as Array<[string, string, readonly string[]]>)
  const imports = new Map<string, number[]>(subjects.map(([name]) => [name, []]))
  for (let i = 0; i < coldImports; i++) {
    // Alternate, and reverse the order every other time, so nobody always goes first.
    const order = i % 2 === 0 ? subjects : [...subjects].reverse()
    for (const [name, specifier, preload] of order) imports.get(name)?.push(coldImportMs(specifier, preload))
  }
  return { bundles, imports }
}

export const redisBundleReport = ({ bundles, imports }: RedisBundleFigures, coldImports: number): string[] => {
  const bundleOf = (subject: string): BundleResult | undefined => subject.endsWith(REDIS_BEYOND)
    ? bundles.find((b) => b.implementation === `${subject.replace(` ${REDIS_BEYOND}`, '')} (middy external)`)
    : bundles.find((b) => b.implementation === subject)
  const rows = [...imports].map(([subject, ms]) => {
    const b = bundleOf(subject)
    return [subject, String(b?.bytes ?? '—'), String(b?.gzipBytes ?? '—'), fmt(median(ms), 1), fmt(Math.min(...ms), 1), fmt(Math.max(...ms), 1)]
  })
  const medianOf = (subject: string): number => median(imports.get(subject) ?? [])
  const whole = (h: string): BundleResult | undefined => bundles.find((b) => b.implementation === h)
  const externals = (h: string): string => (whole(h)?.externalImports ?? []).map((p) => `\`${p}\``).join(', ') || 'none'
  const sdk = (h: string): string => {
    const modules = sdkModulesOf(whole(h))
    return modules.length === 0 ? 'no `@aws-sdk/*` module' : `**${modules.join(', ')}**`
  }
  return [
    '### Bundle and cold import of the Redis handlers',
    '',
    'esbuild, minified ESM, platform node, `@aws-sdk/*` external, and the Redis client (`redis`, `@redis/*`) external, since both ' +
      `handlers load the same one. Cold import: a fresh \`node\` per import, ${coldImports} per subject, alternating. ` +
      `"${REDIS_BEYOND}": bundled with \`@middy/core\` external too; \`redis\` and \`@middy/core\` imported and a first client created ` +
      '(untimed) in the same child first, since the first `createClient` of `redis` costs tens of milliseconds to either handler.',
    '',
    table(['subject', 'bytes', 'gzip bytes', 'cold import median ms', 'min', 'max'], rows),
    '',
    `Ratios ours/theirs: bytes ${fmt(ratio(whole('ours-redis')?.bytes ?? 0, whole('theirs-redis')?.bytes ?? 1), 3)}, ` +
      `cold import ${fmt(ratio(medianOf('ours-redis'), medianOf('theirs-redis')), 3)}, ` +
      `cold import ${REDIS_BEYOND} ${fmt(ratio(medianOf(`ours-redis ${REDIS_BEYOND}`), medianOf(`theirs-redis ${REDIS_BEYOND}`)), 3)}.`,
    '',
    `What each bundle imports at run time (esbuild metafile): ours: ${externals('ours-redis')}; theirs: ${externals('theirs-redis')}. ` +
      `AWS SDK: ours ${sdk('ours-redis')}; theirs ${sdk('theirs-redis')}.`
  ]
}
