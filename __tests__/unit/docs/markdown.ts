/**
 * Reading the user docs as data, for the tests that hold them to the code: the tables under a
 * heading, and the ```ts examples with their hidden preambles (see CONTRIBUTING.md).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/** The Markdown files whose tables and examples users read: the README and every docs/*.md. */
export const userDocs = (root: string): string[] =>
  ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => join('docs', f))]

/** A table row's cells, split on `|` but not on `\|` (a pipe inside a cell), trimmed. */
const cells = (line: string): string[] =>
  line.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'))

/**
 * The body rows of the first table after the heading `heading` (the whole heading line, such as
 * `## Options`), as cells. Throws when there is no such heading or table, so a renamed section
 * fails the test instead of passing it with nothing checked.
 */
export const tableAfter = (markdown: string, heading: string): string[][] => {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.trim() === heading)
  if (start < 0) throw new Error(`no heading "${heading}"`)
  const first = lines.findIndex((line, i) => i > start && line.trim().startsWith('|'))
  const next = lines.findIndex((line, i) => i > start && /^#{1,6} /.test(line))
  if (first < 0 || (next >= 0 && next < first)) throw new Error(`no table under "${heading}"`)
  const rows: string[][] = []
  for (let i = first + 2; i < lines.length && lines[i]?.trim().startsWith('|'); i++) rows.push(cells(lines[i] as string))
  return rows
}

/** `` `name` `` → `name`; text compared as words, whatever its backticks, spacing or final full stop. */
export const plain = (text: string): string => text.replace(/`/g, '').replace(/\s+/g, ' ').trim().replace(/\.$/, '')

export interface Snippet {
  /** The example's first line: `docs/http.md:42`. */
  at: string
  /** The hidden preamble (an HTML comment `<!-- ts-preamble … -->` right above the fence), then the example. */
  code: string
  /** Lines of `code` before the example's first line. */
  preambleLines: number
  /**
   * The file name a reader is told to save the example as (`<!-- ts-preamble handler.ts`), so that
   * another example of the same page can import it (`./handler.js`); undefined for most examples.
   */
  file?: string
}

const PREAMBLE = /<!--\s*ts-preamble(?:[ \t]+([\w.-]+\.ts))?[ \t]*\n((?:(?!-->)[\s\S])*)-->\s*$/

/** Every ```ts block of `markdown`, each with the hidden preamble written right above it, if any, and its file name. */
export const tsSnippets = (markdown: string, file: string): Snippet[] => {
  const lines = markdown.split('\n')
  const snippets: Snippet[] = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== '```ts') continue
    const end = lines.findIndex((line, j) => j > i && line.trim() === '```')
    if (end < 0) throw new Error(`${file}:${i + 1}: a \`\`\`ts block is not closed`)
    const above = lines.slice(0, i).join('\n')
    const found = PREAMBLE.exec(above)
    const preamble = found?.[2] ?? ''
    const code = `${preamble}\n${lines.slice(i + 1, end).join('\n')}\n`
    snippets.push({ at: `${file}:${i + 2}`, code, preambleLines: preamble.split('\n').length, ...(found?.[1] === undefined ? {} : { file: found[1] }) })
    i = end
  }
  return snippets
}
