import { expect, test } from '@jest/globals'
import { readFileSync } from 'node:fs'

/**
 * The Node.js and Middy versions the package is built, tested and deployed for. Lambda no longer
 * creates nodejs20.x functions (and then no longer updates them):
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html
 * and Middy 7 needs Node.js 22. So: Node 22 and 24, Middy 7 first, 6 and 5 still tested.
 */

const json = (path: string): Record<string, any> => JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>
const pkg = json('package.json')
const LAMBDA_RUNTIMES = ['nodejs22.x', 'nodejs24.x']

test('the package and the example app declare Node.js 22 or later', () => {
  expect(pkg.engines).toEqual({ node: '>=22' })
  expect(json('examples/sam-app/package.json').engines).toEqual({ node: '>=22' })
  expect(pkg.devDependencies['@types/node']).toMatch(/^\^22\./)
})

test('every function of the SAM templates runs on nodejs22.x or nodejs24.x', () => {
  const runtimes = [...readFileSync('examples/sam-app/template.yaml', 'utf8').matchAll(/^\s*Runtime:\s*(\S+)/gm)].map((m) => m[1])
  expect(runtimes.length).toBeGreaterThan(0)
  for (const runtime of runtimes) expect(LAMBDA_RUNTIMES).toContain(runtime)
})

test('Middy 7 is the dev dependency; 6 and 5 are aliases the tests run too; the peer range admits all three', () => {
  const dev = pkg.devDependencies as Record<string, string>
  expect(dev['@middy/core']).toMatch(/^\^7\./)
  expect(dev['middy-core-6']).toMatch(/^npm:@middy\/core@\^6\./)
  expect(dev['middy-core-5']).toMatch(/^npm:@middy\/core@\^5\./)
  expect(dev['middy-core-7']).toBeUndefined()
  expect(pkg.peerDependencies['@middy/core']).toBe('>=5 <8')
  expect(json('examples/sam-app/package.json').dependencies['@middy/core']).toMatch(/^\^7\./)
})

test('CI runs on Node 22 and 24 only, 22 first', () => {
  const run = readFileSync('.ci/run', 'utf8')
  expect(run).toContain('NODE_MAJORS=(${CI_NODE_MAJORS:-22 24})')
  expect(run).toContain('case "$1" in 22|24) ;;')
  expect(run).not.toMatch(/node@20|\b20\)/)
})
