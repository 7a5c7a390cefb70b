/**
 * `npm run bench:budgets`: each typical handler's minified bundle against its budget in
 * `bench/budgets.json` and against the target (a fraction of the same handler on Powertools).
 * `npm run bench:budgets -- --update` sets every budget to today's size rounded up to the next
 * KB (commit the file with the change that moved it). `--json` prints the figures as JSON.
 */
import { measureBudgets, readBudgets, updateBudgets } from './lib/budgets.js'

const args = new Set(process.argv.slice(2))
const budgets = readBudgets()
const figures = await measureBudgets(budgets)
if (args.has('--json')) {
  process.stdout.write(JSON.stringify(figures) + '\n')
} else {
  const after = args.has('--update') ? updateBudgets(budgets, figures) : budgets
  for (const f of figures) {
    const budget = after.handlers[f.name]?.budgetBytes ?? 0
    process.stdout.write(`${f.name}: ${f.bytes} bytes, budget ${budget}${f.bytes > budget ? ' (OVER)' : ''}; ` +
      `target ${f.targetBytes} (${budgets.targetRatio} × ${f.entry.comparator} ${f.comparatorBytes}), now ${(f.bytes / f.comparatorBytes).toFixed(3)} of it\n`)
  }
  if (args.has('--update')) process.stdout.write('bench/budgets.json updated: commit it with the change that moved the sizes.\n')
}
