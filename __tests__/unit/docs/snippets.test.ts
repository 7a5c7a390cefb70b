import { expect, test } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import ts from 'typescript'
import { type Snippet, tsSnippets, userDocs } from './markdown.js'

/**
 * Every ```ts example of the README and docs/ compiles against the package's own types, as a
 * user's module importing `middy-idempotency` would. The examples are compiled in memory, as
 * files of a folder of this repository (so its node_modules resolve `@middy/core`, `redis`…),
 * with the package's entry points mapped onto src/. How to write one: CONTRIBUTING.md.
 */
const root = process.cwd()
const folder = join(root, '.docs-examples')

const snippets: Snippet[] = userDocs(root).flatMap((file) => tsSnippets(readFileSync(join(root, file), 'utf8'), file))
// `export {}`: each example is a module of its own, as a user's file is. An example the page names
// (`<!-- ts-preamble handler.ts`) gets that name, in a folder of its page, so that another example
// of the page imports it as the reader's file would (`./handler.js`).
const fileOf = (snippet: Snippet, i: number): string =>
  snippet.file === undefined ? join(folder, `example-${i}.ts`) : join(folder, snippet.at.split(':')[0] ?? '', snippet.file)
const files = new Map(snippets.map((snippet, i) => [fileOf(snippet, i), { snippet, text: `${snippet.code}\nexport {}\n` }]))

const compilerOptions = (): ts.CompilerOptions => {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
  return {
    ...options,
    noEmit: true,
    paths: {
      'middy-idempotency': [join(root, 'src/index.ts')],
      'middy-idempotency/batch': [join(root, 'src/batch.ts')],
      'middy-idempotency/event': [join(root, 'src/event.ts')],
      'middy-idempotency/dynamodb': [join(root, 'src/dynamodb.ts')],
      'middy-idempotency/redis': [join(root, 'src/redis.ts')],
      'middy-idempotency/store': [join(root, 'src/store.ts')]
    }
  }
}

test('the docs have examples to check', () => {
  expect(snippets.length).toBeGreaterThan(10)
})

test('no two examples of a page are saved under the same file name', () => {
  expect(files.size).toBe(snippets.length)
})

test('every ```ts example in README.md and docs/ type-checks against the package', () => {
  const options = compilerOptions()
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  const folders = new Set([...files.keys()].map((name) => dirname(name)))
  const directoryExists = host.directoryExists?.bind(host)
  host.directoryExists = (name) => folders.has(name) || (directoryExists?.(name) ?? true)
  host.fileExists = (name) => files.has(name) || fileExists(name)
  host.readFile = (name) => files.get(name)?.text ?? readFile(name)
  host.getSourceFile = (name, version, ...rest) => {
    const file = files.get(name)
    return file === undefined ? getSourceFile(name, version, ...rest) : ts.createSourceFile(name, file.text, version, true)
  }
  const program = ts.createProgram([...files.keys()], options, host)
  const problems = [...files].flatMap(([name, { snippet }]) => {
    const source = program.getSourceFile(name)
    return ts.getPreEmitDiagnostics(program, source).map((d) => {
      const line = d.start === undefined || source === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line
      const [doc = '', first = '0'] = snippet.at.split(':')
      const where = line < snippet.preambleLines ? `${snippet.at} (its preamble)` : `${doc}:${Number(first) + line - snippet.preambleLines}`
      return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
  })
  expect(problems).toEqual([])
}, 120_000)
