import { bundleHandler } from './lib/bundle.js'
for (const h of process.argv.slice(2)) {
  const r = await bundleHandler(h)
  console.log(h, r.bytes, r.gzipBytes)
  const groups = new Map<string, number>()
  for (const s of r.sources) { const g = s.path.startsWith('src/') ? s.path : s.path.replace(/node_modules\/((@[^/]+\/)?[^/]+).*/, '$1'); groups.set(g, (groups.get(g) ?? 0) + s.bytes) }
  for (const [p, b] of [...groups].sort((a, b) => b[1] - a[1])) console.log(String(b).padStart(7), p)
}
