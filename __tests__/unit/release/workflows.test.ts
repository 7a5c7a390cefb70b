import { describe, expect, test } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/**
 * The GitHub Actions workflows of the public repository (they cannot run here): valid YAML, and
 * the release publishes only after the checks CI runs. js-yaml is already installed (ESLint's).
 */

const yaml = createRequire(import.meta.url)('js-yaml') as { load: (text: string) => unknown }
interface Step { uses?: string, run?: string, with?: Record<string, unknown>, env?: Record<string, string> }
interface Job { 'runs-on': string, permissions?: Record<string, string>, strategy?: { matrix?: Record<string, unknown> }, steps: Step[] }
interface Workflow { on: Record<string, unknown>, permissions?: Record<string, string>, jobs: Record<string, Job> }
const workflow = (name: string): Workflow => yaml.load(readFileSync(`.github/workflows/${name}`, 'utf8')) as Workflow
const runs = (job: Job): string[] => job.steps.map((step) => step.run ?? '')
const indexOf = (job: Job, command: RegExp): number => runs(job).findIndex((run) => command.test(run))

describe('ci.yml', () => {
  const ci = workflow('ci.yml')
  const jobs = Object.values(ci.jobs)

  test('runs on every push and pull request', () => {
    expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'push'])
  })

  test('runs .ci/run once per supported Node, 22 and 24, each leg on its own Node', () => {
    expect(jobs).toHaveLength(1)
    const [job] = jobs as [Job]
    expect(job.strategy?.matrix?.node).toEqual([22, 24])
    const step = job.steps.find((s) => s.run === '.ci/run')
    expect(step?.env).toEqual({ CI_NODE_MAJORS: '${{ matrix.node }}' })
    expect(job.steps.find((s) => s.uses?.startsWith('actions/setup-node@') === true)?.with?.['node-version']).toBe('${{ matrix.node }}')
  })

  test('reads the repository only', () => {
    expect(ci.permissions).toEqual({ contents: 'read' })
  })
})

describe('release.yml', () => {
  const release = workflow('release.yml')
  const job = release.jobs.release as Job

  test('runs on a version tag only', () => {
    expect(release.on).toEqual({ push: { tags: ['v*'] } })
  })

  test('may ask for an OIDC token (npm provenance) in the publishing job only', () => {
    expect(release.permissions).toEqual({ contents: 'read' })
    expect(job.permissions).toEqual({ contents: 'read', 'id-token': 'write' })
  })

  test('publishes with provenance, public, after the same checks as .ci/run and the name check', () => {
    const checks = indexOf(job, /^\.ci\/run$/)
    const tag = indexOf(job, /GITHUB_REF_NAME/)
    const name = indexOf(job, /^node scripts\/check-package-name\.mjs$/)
    const publish = indexOf(job, /^npm publish --provenance --access public$/)
    expect([tag, checks, name, publish].every((i) => i >= 0)).toBe(true)
    expect(tag).toBeLessThan(publish)
    expect(checks).toBeLessThan(name)
    expect(name).toBeLessThan(publish)
    // Every check, on every Node .ci/run covers: nothing narrows it.
    expect(job.steps[checks]?.env?.CI_NODE_MAJORS).toBeUndefined()
    expect(runs(job).filter((run) => /npm publish/.test(run))).toHaveLength(1)
  })
})

describe('.ci/run', () => {
  const run = readFileSync('.ci/run', 'utf8')

  test('checks the API reports and the packed tarball after the tests', () => {
    const test = run.indexOf('npm test')
    expect(test).toBeGreaterThan(0)
    expect(run.indexOf('npm run api:check')).toBeGreaterThan(test)
    expect(run.indexOf('node scripts/check-package.mjs')).toBeGreaterThan(test)
  })
})
