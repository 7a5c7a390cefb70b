/**
 * Reading V8's own profiles of this process through the inspector: self time per function (the
 * CPU profile), calls per function (precise coverage with call counts), bytes allocated per
 * function (the sampling heap profiler, objects collected since included). Positions are mapped
 * back to the TypeScript file through the inline source map `tsx` gives every module it
 * transforms, so a row reads `claim (src/lifecycle/claim.ts:18)`.
 */
import { SourceMap } from 'node:module'
import { Session } from 'node:inspector/promises'
import { fileURLToPath } from 'node:url'
import { relative } from 'node:path'

export interface Site { name: string, file: string, line: number }
export interface Row extends Site { value: number }

const INLINE_MAP = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/

export class Profiling {
  readonly session = new Session()
  private readonly maps = new Map<string, { source: string, map?: SourceMap }>()

  constructor (private readonly root: string) {
    this.session.connect()
  }

  async start (): Promise<void> {
    await this.session.post('Debugger.enable')
    await this.session.post('Profiler.enable')
  }

  /** Where a generated position of a script is in its TypeScript source. */
  async site (scriptId: string, url: string, name: string, line: number, column: number): Promise<Site> {
    let entry = this.maps.get(scriptId)
    if (entry === undefined) {
      const { scriptSource } = await this.session.post('Debugger.getScriptSource', { scriptId })
      const inline = INLINE_MAP.exec(scriptSource)?.[1]
      entry = { source: scriptSource, ...(inline === undefined ? {} : { map: new SourceMap(JSON.parse(Buffer.from(inline, 'base64').toString('utf8'))) }) }
      this.maps.set(scriptId, entry)
    }
    const found = entry.map?.findEntry(line, column) as { originalLine?: number, originalSource?: string } | undefined
    const path = url.startsWith('file:') ? fileURLToPath(url) : url
    return {
      name: name === '' ? '(anonymous)' : name,
      file: relative(this.root, found?.originalSource !== undefined ? fileURLToPath(new URL(found.originalSource, url)) : path),
      line: (found?.originalLine ?? line) + 1
    }
  }

  /** Line and column (0-based) of an offset in a script's generated text. */
  async position (scriptId: string, url: string, offset: number): Promise<[number, number]> {
    if (!this.maps.has(scriptId)) await this.site(scriptId, url, '', 0, 0)
    const text = (this.maps.get(scriptId) as { source: string }).source.slice(0, offset)
    const line = text.split('\n').length - 1
    return [line, offset - (text.lastIndexOf('\n') + 1)]
  }

  /** Self time (µs) of every function, from a CPU profile taken around `run`. */
  async cpu (run: () => Promise<void>, intervalUs = 100): Promise<Row[]> {
    await this.session.post('Profiler.setSamplingInterval', { interval: intervalUs })
    await this.session.post('Profiler.start')
    await run()
    const { profile } = await this.session.post('Profiler.stop')
    const selfUs = new Map<number, number>()
    const deltas = profile.timeDeltas ?? []
    for (let i = 0; i < (profile.samples ?? []).length; i++) {
      const id = (profile.samples as number[])[i] as number
      selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i + 1] ?? 0))
    }
    const rows: Row[] = []
    for (const node of profile.nodes) {
      const us = selfUs.get(node.id)
      if (us === undefined) continue
      const { scriptId, url, functionName, lineNumber, columnNumber } = node.callFrame
      const site = url === '' ? { name: functionName || '(program)', file: '', line: 0 } : await this.site(scriptId, url, functionName, lineNumber, columnNumber)
      rows.push({ ...site, value: us })
    }
    return merge(rows)
  }

  /** How many times each function ran during `run` (precise coverage, call counts). */
  async calls (run: () => Promise<void>): Promise<Row[]> {
    await this.session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })
    await this.session.post('Profiler.takePreciseCoverage')
    await run()
    const { result } = await this.session.post('Profiler.takePreciseCoverage')
    await this.session.post('Profiler.stopPreciseCoverage')
    const rows: Row[] = []
    for (const script of result) {
      if (!script.url.includes('/src/')) continue
      for (const fn of script.functions) {
        const range = fn.ranges[0]
        if (range === undefined || range.count === 0 || (fn.functionName === '' && range.startOffset === 0)) continue
        const [line, column] = await this.position(script.scriptId, script.url, range.startOffset)
        rows.push({ ...await this.site(script.scriptId, script.url, fn.functionName, line, column), value: range.count })
      }
    }
    return merge(rows)
  }

  /** Bytes allocated by each function during `run` (sampled; objects already collected included). */
  async allocations (run: () => Promise<void>, intervalBytes = 1024): Promise<Row[]> {
    await this.session.post('HeapProfiler.enable')
    await this.session.post('HeapProfiler.startSampling', { samplingInterval: intervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
    await run()
    const { profile } = await this.session.post('HeapProfiler.stopSampling')
    const rows: Row[] = []
    const visit = async (node: typeof profile.head): Promise<void> => {
      const bytes = node.selfSize
      if (bytes > 0) {
        const { scriptId, url, functionName, lineNumber, columnNumber } = node.callFrame
        rows.push({ ...(url === '' ? { name: functionName || '(root)', file: '', line: 0 } : await this.site(scriptId, url, functionName, lineNumber, columnNumber)), value: bytes })
      }
      for (const child of node.children) await visit(child)
    }
    await visit(profile.head)
    return merge(rows)
  }

  disconnect (): void { this.session.disconnect() }
}

/** One row per function (a function's several nodes in a profile summed). */
const merge = (rows: Row[]): Row[] => {
  const by = new Map<string, Row>()
  for (const row of rows) {
    const id = `${row.name} ${row.file}:${row.line}`
    const known = by.get(id)
    if (known === undefined) by.set(id, { ...row })
    else known.value += row.value
  }
  return [...by.values()].sort((a, b) => b.value - a.value)
}
