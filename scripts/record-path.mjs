/**
 * `npm run build && node scripts/record-path.mjs`: the files of `dist/` (stores aside) whose functions run
 * when one new SQS record goes through the README's stack (`sqsPartialBatchFailure`, `idempotency`,
 * `perRecord`), from `idempotency({ store })` to Lambda's answer; and the imports between them that carry a
 * call. It measures how many files a reader follows a record through (docs/architecture.md). `-v` lists them.
 */
import { existsSync, readFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import path from 'node:path'
import { fileURLToPath, URL } from 'node:url'
import middy from '@middy/core'
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure'

const dist = fileURLToPath(new URL('../dist/', import.meta.url))
if (!existsSync(path.join(dist, 'batch.js'))) {
  console.error('record-path: no dist/batch.js: run `npm run build` first')
  process.exit(1)
}
const { idempotency, perRecord } = await import(path.join(dist, 'batch.js'))
const { MemoryStore } = await import(path.join(dist, 'index.js'))

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })
const handler = middy()
  .use(sqsPartialBatchFailure())
  .use(idempotency({ store: new MemoryStore() }))
  .handler(perRecord(async (record) => ({ charged: record.messageId })))
const record = {
  messageId: 'm-1',
  body: '{"orderId":"o-1"}',
  attributes: { ApproximateReceiveCount: '1' },
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders'
}
const answer = await handler({ Records: [record] }, { getRemainingTimeInMillis: () => 30_000, functionName: 'f' })
const { result } = await session.post('Profiler.takePreciseCoverage')

/** File (relative to dist/) -> names of its functions that ran; a module's own top level is not counted. */
const ran = new Map()
for (const script of result) {
  if (!script.url.startsWith('file://')) continue
  const file = path.relative(dist, fileURLToPath(script.url))
  if (file.startsWith('..') || file.startsWith('stores/')) continue
  const called = script.functions.filter((f) => f.ranges[0].startOffset !== 0 && f.ranges[0].count > 0)
  if (called.length > 0) ran.set(file, called.map((f) => f.functionName))
}
const edges = new Set()
for (const file of ran.keys()) {
  const text = readFileSync(path.join(dist, file), 'utf8')
  for (const [, names, from] of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(\.[^']+)'/g)) {
    const target = path.normalize(path.join(path.dirname(file), from))
    const called = ran.get(target)
    if (called === undefined) continue
    const used = names.split(',').map((n) => n.trim().split(/\s+as\s+/)[0]).filter((n) => n !== '')
    // A class counts when its constructor or members ran.
    if (used.some((n) => called.includes(n) || (/^[A-Z]/.test(n) && called.some((f) => f !== '' && f !== n)))) {
      edges.add(`${file} -> ${target}`)
    }
  }
}
if (process.argv.includes('-v')) {
  for (const [file, names] of [...ran].sort()) {
    console.log(file.padEnd(30), names.map((n) => n || '(anonymous)').join(' '))
  }
  for (const edge of edges) console.log(edge)
}
console.log(`files: ${ran.size}, imports that carry a call: ${edges.size}, answer: ${JSON.stringify(answer)}`)
