/**
 * The bundle budget (bench/budgets.json): each typical handler, bundled as users deploy it
 * (the code `npm run bench:budgets` runs), is no bigger than its budget. Bytes are
 * deterministic for a given lockfile, so this may assert them; times are never asserted.
 */
import { beforeAll, describe, expect, it } from '@jest/globals'
import { measureBudgets, readBudgets, type BudgetFigure } from '../../bench/lib/budgets.js'

const budgets = readBudgets()
let figures: BudgetFigure[] = []
beforeAll(async () => { figures = await measureBudgets(budgets) })

const verdict = (f: BudgetFigure): string =>
  `${f.name} (${f.entry.description}) is ${f.bytes} bytes minified, over its budget of ${f.entry.budgetBytes}. ` +
  `The target is ${budgets.targetRatio} × Powertools' same handler (bench/handlers/${f.entry.comparator}.ts, ${f.comparatorBytes} bytes) = ${f.targetBytes} bytes. ` +
  'Make the change pay for its bytes, or raise the budget in a reviewed commit: npm run bench:budgets -- --update'

describe('bundle budget', () => {
  it('measures the three typical handlers of bench/budgets.json', () => {
    expect(figures.map((f) => f.name).sort()).toEqual(['http-dynamodb', 'sqs-dynamodb', 'sqs-redis'])
  })

  it.each(Object.keys(budgets.handlers))('%s: its minified bundle is within its budget', (name) => {
    const figure = figures.find((f) => f.name === name) as BudgetFigure
    if (figure.bytes > figure.entry.budgetBytes) throw new Error(verdict(figure))
    expect(figure.bytes).toBeLessThanOrEqual(figure.entry.budgetBytes)
  })

  it('states each target as a fraction of the same handler on Powertools', () => {
    for (const f of figures) expect(f.targetBytes).toBe(Math.floor(budgets.targetRatio * f.comparatorBytes))
  })
})
