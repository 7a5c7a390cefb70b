import { describe, expect, test } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tsSnippets, userDocs } from './markdown.js'

/**
 * No example a user copies logs a payload. Middy middlewares whose defaults do: `@middy/sqs-partial-batch-failure`
 * (`console.error` of every failed record, body included), `@middy/http-error-handler`
 * (`console.error` of every error, a 400, 409 or 422 with its stack included) and
 * `@middy/input-output-logger` (every event and response). Each call in the README, docs/ and
 * examples/ must set `logger` itself; and `sqsPartialBatchFailure({ logger: false })` does not
 * type-check with Middy 6's types (its logger is a function only), so it is refused too.
 */

const root = process.cwd()

/** Every .ts file under `dir`, node_modules and build output aside. */
const sources = (dir: string): string[] => readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !/(^|\/)(node_modules|\.aws-sam|dist)\//.test(file))
  .map((file) => join(dir, file))

const copied: Array<{ at: string, code: string }> = [
  ...userDocs(root).flatMap((file) => tsSnippets(readFileSync(join(root, file), 'utf8'), file)),
  ...sources('examples').map((file) => ({ at: file, code: readFileSync(join(root, file), 'utf8') }))
]

/** The argument text of each call of `name(` in `code` (up to its closing parenthesis), with the line it is on. */
const callsOf = (code: string, name: string): Array<{ line: number, argument: string }> => {
  const found: Array<{ line: number, argument: string }> = []
  for (const match of code.matchAll(new RegExp(`\\b${name}\\(`, 'g'))) {
    const start = (match.index ?? 0) + match[0].length
    let depth = 1
    let end = start
    while (end < code.length && depth > 0) {
      if (code[end] === '(') depth++
      else if (code[end] === ')') depth--
      end++
    }
    found.push({ line: code.slice(0, match.index).split('\n').length, argument: code.slice(start, end - 1).trim() })
  }
  return found
}

const middlewares = ['sqsPartialBatchFailure', 'httpErrorHandler', 'inputOutputLogger']

describe('examples users copy log no payload', () => {
  test('there are such calls to check', () => {
    expect(copied.flatMap(({ code }) => callsOf(code, 'sqsPartialBatchFailure')).length).toBeGreaterThan(5)
    expect(copied.flatMap(({ code }) => callsOf(code, 'httpErrorHandler')).length).toBeGreaterThan(1)
  })

  test.each(middlewares)('every %s(...) sets its own logger', (name) => {
    const defaults = copied.flatMap(({ at, code }) => callsOf(code, name)
      .filter(({ argument }) => !/^\{\s*logger:/.test(argument) || (name === 'sqsPartialBatchFailure' && /^\{\s*logger:\s*false\b/.test(argument)))
      .map(({ line, argument }) => `${at} (+${line}): ${name}(${argument})`))
    expect(defaults).toEqual([])
  })
})
