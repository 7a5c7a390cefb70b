#!/usr/bin/env node
/**
 * Before a publish: is the npm name of package.json free, or already ours? npm gives a name to
 * whoever publishes it first, and a public repository may declare the same name without having
 * published it yet; so the release checks the registry itself, at the time of the release.
 *
 * - not on the registry (404): free, this is the first publish;
 * - on the registry with our `repository`: ours, unless this version is already there;
 * - on the registry with another repository, or none: not ours, stop and say how to publish
 *   under a scope instead (CONTRIBUTING.md, "Publishing").
 *
 * Usage: node scripts/check-package-name.mjs (reads package.json; asks `npm view <name> --json`).
 * Exits 0 when the publish may go ahead, 1 with the reason otherwise.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath, URL } from 'node:url'

/** `git+https://github.com/Owner/Repo.git`, `github:owner/repo`, `{ url }` → `github.com/owner/repo`. */
export const repositoryOf = (repository) => {
  const url = typeof repository === 'string' ? repository : repository?.url
  if (typeof url !== 'string' || url === '') return undefined
  const shorthand = /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(url)
  const path = shorthand !== null
    ? `github.com/${shorthand[1]}`
    : url.replace(/^git\+/, '').replace(/^[a-z+]+:\/\//, '').replace(/^git@([^:]+):/, '$1/').replace(/^[^@/]+@/, '')
  return path.replace(/\.git$/, '').replace(/\/+$/, '').toLowerCase()
}

const SCOPE_HINT = 'To publish under a scope instead, see CONTRIBUTING.md, "Publishing".'

/**
 * The decision, from package.json and what the registry answered: `{ ok, message }`.
 * `registry` is `{ status: 'missing' }` (npm answered 404), `{ status: 'found', manifest }`
 * (`npm view --json` output: its `repository` and `versions`) or `{ status: 'error', detail }`.
 */
export const decide = (pkg, registry) => {
  const { name, version } = pkg
  const ours = repositoryOf(pkg.repository)
  if (ours === undefined) {
    return { ok: false, message: `package.json has no repository: cannot tell whether the npm name ${name} is ours.` }
  }
  if (registry.status === 'missing') {
    return { ok: true, message: `${name} is not on the npm registry: free for a first publish of ${version}.` }
  }
  if (registry.status === 'error') {
    return { ok: false, message: `could not ask the npm registry about ${name}: ${registry.detail}` }
  }
  const theirs = repositoryOf(registry.manifest?.repository)
  if (theirs !== ours) {
    return {
      ok: false,
      message: `the npm name ${name} is taken by another package (repository ${theirs ?? 'not stated'}, ` +
        `latest ${registry.manifest?.version ?? 'unknown'}), not ${ours}. ${SCOPE_HINT}`
    }
  }
  const versions = [registry.manifest?.versions ?? []].flat()
  if (versions.includes(version)) {
    return {
      ok: false,
      message: `${name}@${version} is already published: bump the version (and tag v<version>) first.`
    }
  }
  return { ok: true, message: `${name} is ours (${ours}): ${version} is new.` }
}

/** `npm view <name> --json`, read as `decide` wants it. */
export const askRegistry = (name, npm = 'npm') => {
  const env = { ...process.env, npm_config_update_notifier: 'false' }
  const result = spawnSync(npm, ['view', name, '--json'], { encoding: 'utf8', env })
  if (result.error !== undefined) return { status: 'error', detail: result.error.message }
  if (result.status === 0) return { status: 'found', manifest: JSON.parse(result.stdout) }
  // npm prints its error as JSON with --json; a missing package is E404.
  const output = `${result.stdout}\n${result.stderr}`
  if (/\bE404\b/.test(output)) return { status: 'missing' }
  return { status: 'error', detail: output.trim().split('\n').slice(0, 5).join(' ') }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  const { ok, message } = decide(pkg, askRegistry(pkg.name))
  console[ok ? 'log' : 'error'](`check-package-name: ${message}`)
  process.exit(ok ? 0 : 1)
}
