/**
 * The bundle budget: three typical handlers bundled as users deploy them (esbuild, minified
 * ESM for Node, `@aws-sdk/*` and the Redis client external, `@middy/*` bundled), each against
 * its budget in `bench/budgets.json`. Bytes are deterministic for a given lockfile, so the unit
 * test asserts them. A budget is a ratchet, not the goal: the goal is a fraction of the same
 * handler on Powertools, bundled here the same way.
 */
import { build } from 'esbuild'
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { lambdaBuildOptions } from './bundle.js'

export const BUDGETS_FILE = fileURLToPath(new URL('../budgets.json', import.meta.url))

export interface BudgetEntry {
  /** What the handler is. */
  description: string
  /** Ours, under `bench/handlers/`. */
  handler: string
  /** The same handler on Powertools, under `bench/handlers/`: the target is `targetRatio` of its bytes. */
  comparator: string
  /** Packages left out besides `@aws-sdk/*` (the Redis client, which both load). */
  external: string[]
  /** Most bytes the minified bundle may have. */
  budgetBytes: number
}

export interface Budgets { targetRatio: number, handlers: Record<string, BudgetEntry> }

export interface BudgetFigure { name: string, entry: BudgetEntry, bytes: number, comparatorBytes: number, targetBytes: number }

export const readBudgets = (): Budgets => JSON.parse(readFileSync(BUDGETS_FILE, 'utf8')) as Budgets

const handlerPath = (name: string): string => fileURLToPath(new URL(`../handlers/${name}.ts`, import.meta.url))

/** Minified bytes of `bench/handlers/<name>.ts`, bundled in memory. */
export const bundledBytes = async (name: string, external: string[]): Promise<number> => {
  const { outputFiles } = await build({ ...lambdaBuildOptions(handlerPath(name), external), write: false, outfile: 'out.mjs' })
  return outputFiles.reduce((sum, f) => sum + f.contents.byteLength, 0)
}

export const measureBudgets = async (budgets: Budgets = readBudgets()): Promise<BudgetFigure[]> =>
  await Promise.all(Object.entries(budgets.handlers).map(async ([name, entry]) => {
    const [bytes, comparatorBytes] = await Promise.all([bundledBytes(entry.handler, entry.external), bundledBytes(entry.comparator, entry.external)])
    return { name, entry, bytes, comparatorBytes, targetBytes: Math.floor(budgets.targetRatio * comparatorBytes) }
  }))

/** The next whole KB at or above `bytes`: today's size, as a budget. */
export const roundUpToKb = (bytes: number): number => Math.ceil(bytes / 1024) * 1024

/** Rewrites `bench/budgets.json` with each handler's measured size rounded up to the next KB. */
export const updateBudgets = (budgets: Budgets, figures: BudgetFigure[]): Budgets => {
  const updated: Budgets = { ...budgets, handlers: { ...budgets.handlers } }
  for (const f of figures) updated.handlers[f.name] = { ...f.entry, budgetBytes: roundUpToKb(f.bytes) }
  writeFileSync(BUDGETS_FILE, JSON.stringify(updated, null, 2) + '\n')
  return updated
}
