/** Plain-text output: short headings and aligned columns, readable in any terminal or log. */

export const heading = (title: string, explanation?: string): void => {
  console.log(`\n${title}`)
  if (explanation !== undefined) console.log(`  ${explanation}`)
}

export const table = (headers: string[], rows: string[][]): void => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  // Every cell padded to its column's width but the last, so no line ends in spaces.
  const line = (cells: string[]) =>
    `  ${cells.map((c, i) => i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd()
  console.log(line(headers))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const row of rows) console.log(line(row))
}

export const shorten = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max - 1)}…`
