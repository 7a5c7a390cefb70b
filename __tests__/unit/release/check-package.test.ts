import { describe, expect, test } from '@jest/globals'
import { exportTargets, tarballProblems } from '../../../scripts/check-package.mjs'

/**
 * The tarball content check of scripts/check-package.mjs (CI runs it on the real `npm pack`; here
 * its rules, on file lists). publint and attw are their own tools and are not re-tested.
 */

const pkg = {
  name: 'middy-idempotency',
  main: './dist/index.js',
  types: './dist/index.d.ts',
  bin: { 'middy-idempotency': './dist/cli.js' },
  exports: {
    '.': { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' },
    './dynamodb': { types: './dist/dynamodb.d.ts', import: './dist/dynamodb.js' },
    './package.json': './package.json'
  }
}
const good = ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/dynamodb.js', 'dist/dynamodb.d.ts', 'dist/cli.js']
const noFile = (): string => ''

describe('exportTargets', () => {
  test('every path of exports, whatever the conditions, with bin, main and types, once each', () => {
    expect(exportTargets(pkg).sort()).toEqual(['dist/cli.js', 'dist/dynamodb.d.ts', 'dist/dynamodb.js', 'dist/index.d.ts', 'dist/index.js', 'package.json'])
  })

  test('nested conditions, arrays and a bin given as a string', () => {
    expect(exportTargets({ bin: './cli.js', exports: { '.': { node: { import: ['./a.js', './b.js'] } } } }).sort()).toEqual(['a.js', 'b.js', 'cli.js'])
  })
})

describe('tarballProblems', () => {
  test('the package as it ships: no problem', () => {
    expect(tarballProblems(pkg, good, noFile)).toEqual([])
  })

  test('tests, bench, sources, scripts, configuration and tarballs are named', () => {
    const extra = ['__tests__/unit/a.test.ts', 'bench/run.ts', 'src/index.ts', 'scripts/x.mjs', 'dist/a.test.js', 'tsconfig.json', 'middy-idempotency-0.1.0.tgz', 'examples/demo.ts', '.github/workflows/ci.yml']
    const problems = tarballProblems(pkg, [...good, ...extra], noFile)
    expect(problems).toHaveLength(extra.length)
    for (const file of extra) expect(problems.some((p) => p.startsWith(`${file} is `))).toBe(true)
  })

  test('an exports target, a bin or the types missing from the tarball is named', () => {
    const files = good.filter((f) => f !== 'dist/dynamodb.d.ts' && f !== 'dist/cli.js')
    expect(tarballProblems(pkg, files, noFile)).toEqual([
      'exports target dist/dynamodb.d.ts is not in the tarball',
      'exports target dist/cli.js is not in the tarball'
    ])
  })

  test('a subpath pattern must match a file', () => {
    const patterned = { exports: { './stores/*': './dist/stores/*.js' } }
    expect(tarballProblems(patterned, ['package.json', 'dist/stores/redis.js'], noFile)).toEqual([])
    expect(tarballProblems(patterned, ['package.json'], noFile)).toEqual(['exports target dist/stores/*.js matches no file of the tarball'])
  })

  test('a source map of files the tarball does not ship is named; one of shipped files is fine', () => {
    const maps: Record<string, string> = {
      'dist/index.js.map': JSON.stringify({ sources: ['../src/index.ts'] }),
      'dist/dynamodb.js.map': JSON.stringify({ sources: ['dynamodb.js'] })
    }
    const read = (file: string): string => maps[file] ?? ''
    expect(tarballProblems(pkg, [...good, ...Object.keys(maps)], read)).toEqual(['dist/index.js.map maps files the tarball does not ship: src/index.ts'])
  })

  test('a map whose generated file is not shipped, and a sourceMappingURL to a map not shipped, are named', () => {
    const texts: Record<string, string> = {
      'dist/gone.js.map': JSON.stringify({ sources: [] }),
      'dist/index.js': 'export {}\n//# sourceMappingURL=index.js.map\n'
    }
    const read = (file: string): string => texts[file] ?? ''
    expect(tarballProblems(pkg, [...good, 'dist/gone.js.map'], read)).toEqual([
      'dist/gone.js.map is the map of dist/gone.js, which the tarball does not ship',
      'dist/index.js points to a source map the tarball does not ship (index.js.map)'
    ])
  })

  test('a map that is not JSON is named, not thrown', () => {
    expect(tarballProblems(pkg, [...good, 'dist/index.js.map'], (file) => file.endsWith('.map') ? '{' : '')).toEqual([
      expect.stringMatching(/^dist\/index\.js\.map is not a readable source map/)
    ])
  })
})
