/**
 * Each entry point's `idempotency` carries only its event family: what a handler imports decides
 * what it pays for (docs/architecture.md: rooms). Read from esbuild's metafile, bundled as users
 * deploy (minified, @aws-sdk/* external); deterministic, so it may assert.
 */
import { describe, expect, it } from '@jest/globals'
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'

const inputsOf = async (entry: string): Promise<string[]> => {
  const { metafile } = await build({
    stdin: { contents: `import { idempotency } from '${entry}'\nexport const m = idempotency`, resolveDir: fileURLToPath(new URL('../../', import.meta.url)), loader: 'ts' },
    bundle: true, minify: true, format: 'esm', platform: 'node', write: false, metafile: true, external: ['@aws-sdk/*'], logLevel: 'silent'
  })
  const output = Object.values(metafile.outputs)[0]
  return Object.entries(output?.inputs ?? {}).filter(([, i]) => i.bytesInOutput > 0).map(([path]) => path)
}

describe('what each entry point carries', () => {
  it('middy-idempotency/batch: the batch engine and its sources, no whole-event or HTTP code', async () => {
    const inputs = await inputsOf('./src/batch.ts')
    expect(inputs).toEqual(expect.arrayContaining(['src/middleware/batch-hooks.ts', 'src/batch/batch.ts', 'src/sources/sqs.ts']))
    expect(inputs.filter((p) => p.startsWith('src/http/') || p === 'src/middleware/event-hooks.ts')).toEqual([])
  })

  it('middy-idempotency/event: whole events and HTTP, no batch engine nor its sources', async () => {
    const inputs = await inputsOf('./src/event.ts')
    expect(inputs).toEqual(expect.arrayContaining(['src/middleware/event-hooks.ts', 'src/http/request.ts', 'src/http/caller.ts']))
    expect(inputs.filter((p) => p.startsWith('src/batch/') || p === 'src/middleware/batch-hooks.ts' || (p.startsWith('src/sources/') && p !== 'src/sources/recognise.ts' && p !== 'src/sources/source.ts'))).toEqual([])
  })

  it('middy-idempotency: every family', async () => {
    const inputs = await inputsOf('./src/index.ts')
    expect(inputs).toEqual(expect.arrayContaining(['src/middleware/batch-hooks.ts', 'src/middleware/event-hooks.ts', 'src/http/request.ts']))
  })

  it('the whole-event lifecycle goes with whole events: in /event and the root, not in /batch', async () => {
    const [batch, event, root] = await Promise.all(['./src/batch.ts', './src/event.ts', './src/index.ts'].map(inputsOf))
    expect(batch).not.toContain('src/lifecycle/whole-event.ts')
    expect(event).toContain('src/lifecycle/whole-event.ts')
    expect(root).toContain('src/lifecycle/whole-event.ts')
  })

  it('middy-idempotency/store: the store contract and isClaimable, no store, no SDK, no Redis client', async () => {
    const { metafile } = await build({
      entryPoints: ['./src/store.ts'],
      bundle: true, format: 'esm', platform: 'node', write: false, metafile: true, logLevel: 'silent'
    })
    // Not external: a module of the SDK or of a Redis client would show as an input.
    expect(Object.keys(metafile.inputs).sort()).toEqual(['src/store.ts', 'src/stores/store.ts'])
  })
})
