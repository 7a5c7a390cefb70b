/** Runs `memory-child.ts` in a fresh Node process (through tsx) and returns what it measured. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export interface MemoryResult {
  records: number
  source: 'sqs' | 'kafka' | 'store-only'
  measure: 'rss' | 'live'
  /** The old space V8 was given (`--max-old-space-size`, MB), when capped as a small function's memory would. */
  heapCapMb?: number
  workload: string
  concurrency: number
  ms: number
  failed: number
  requests: number
  attempts: Record<string, number>
  maxInFlight: number
  heapBeforeBytes: number
  /** The heap after a full collection, at its highest while the batch ran: what stays reachable. */
  heapPeakLiveBytes: number
  rssBeforeBytes: number
  rssPeakSampledBytes: number
  maxRssBytes: number
}

const child = fileURLToPath(new URL('./memory-child.ts', import.meta.url))

export const measureMemory = async (endpoint: string, records: number, workload: 'new' | 'duplicates', concurrency: number, source: 'sqs' | 'kafka' | 'store-only' = 'sqs', measure: 'rss' | 'live' = 'rss', heapCapMb?: number): Promise<MemoryResult> =>
  await new Promise((resolve, reject) => {
    const cap = heapCapMb === undefined ? [] : [`--max-old-space-size=${heapCapMb}`]
    const proc = spawn(process.execPath, [...cap, '--expose-gc', '--import', 'tsx', child, endpoint, String(records), workload, String(concurrency), source, measure], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_NO_WARNINGS: '1' }
    })
    let out = ''
    let err = ''
    proc.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    proc.stderr.on('data', (chunk: Buffer) => { err = (err + chunk.toString()).slice(-4000) })
    proc.on('error', reject)
    proc.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? ''
      if (code !== 0 || line === '') reject(new Error(`memory child exited with ${code}: ${err}`))
      else resolve({ ...JSON.parse(line) as MemoryResult, ...(heapCapMb === undefined ? {} : { heapCapMb }) })
    })
  })
