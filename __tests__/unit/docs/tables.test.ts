import { describe, expect, test } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { plain, tableAfter } from './markdown.js'
import { exportedErrors, optionsOf } from './tsdoc.js'

/**
 * The option and error tables users read are the TSDoc, restated: every option of the public
 * options types is listed with the default its TSDoc documents, nothing else is, and every
 * exported error is listed with its `statusCode`.
 */
const root = process.cwd()
const read = (file: string): string => readFileSync(join(root, file), 'utf8')

const optionTables = [
  { doc: 'docs/options.md', heading: '## idempotency(options)', source: 'src/types.ts', type: 'IdempotencyOptions' },
  { doc: 'docs/options.md', heading: '## perRecord', source: 'src/types.ts', type: 'PerRecordOptions' },
  { doc: 'docs/options.md', heading: '## DynamoDBStore', source: 'src/stores/dynamodb/types.ts', type: 'DynamoDBStoreOptions' },
  { doc: 'docs/redis.md', heading: '## Options', source: 'src/stores/redis/store-options.ts', type: 'RedisStoreOptions' }
]

/** `| option | default | … |` rows as name → default cell; a name is the first cell's backticked word. */
const rowsByName = (rows: string[][]): Map<string, string> =>
  new Map(rows.map(([name = '', byDefault = '']) => [plain(name), byDefault]))

describe.each(optionTables)('the options table of $doc under "$heading" is $type', ({ doc, heading, source, type }) => {
  const rows = rowsByName(tableAfter(read(doc), heading))
  const options = optionsOf(root, source, type)

  test('lists every option, and nothing else', () => {
    expect([...rows.keys()].sort()).toEqual(options.map((o) => o.name).sort())
  })

  test.each(options)('$name: the default its TSDoc documents', ({ name, required, default: byDefault }) => {
    if (required) return expect(plain(rows.get(name) ?? '')).toBe('required')
    expect({ name, documented: byDefault !== undefined }).toEqual({ name, documented: true })
    expect(plain(rows.get(name) ?? '')).toBe(plain(byDefault ?? ''))
  })
})

describe('the errors table of docs/errors.md', () => {
  const rows = rowsByName(tableAfter(read('docs/errors.md'), '# Errors'))
  const errors = exportedErrors(root)

  test('lists every error class the package exports, and nothing else', () => {
    expect(errors.length).toBeGreaterThan(5)
    expect([...rows.keys()].sort()).toEqual(errors.map((e) => e.name).sort())
  })

  test.each(errors)('$name: its statusCode, or — without one', ({ name, statusCode }) => {
    const cell = plain(rows.get(name) ?? '')
    if (statusCode === 'any') return expect(cell).not.toMatch(/^(—|)$/)
    expect(cell).toBe(statusCode ?? '—')
  })
})
