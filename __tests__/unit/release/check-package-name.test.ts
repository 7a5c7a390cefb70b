import { describe, expect, test } from '@jest/globals'
import { decide, repositoryOf } from '../../../scripts/check-package-name.mjs'

/**
 * The release's check that the npm name is free or ours (scripts/check-package-name.mjs): its
 * decision, from package.json and what `npm view` answered. The registry itself is not asked here.
 */

const ours = { name: 'middy-idempotency', version: '0.2.0', repository: { type: 'git', url: 'git+https://github.com/middy-idempotency/middy-idempotency.git' } }

describe('repositoryOf reads a repository however package.json writes it', () => {
  test.each([
    ['git+https://github.com/Middy-Idempotency/middy-idempotency.git'],
    ['https://github.com/middy-idempotency/middy-idempotency'],
    ['git://github.com/middy-idempotency/middy-idempotency.git'],
    ['git+ssh://git@github.com/middy-idempotency/middy-idempotency.git'],
    ['git@github.com:middy-idempotency/middy-idempotency.git'],
    ['github:middy-idempotency/middy-idempotency'],
    ['middy-idempotency/middy-idempotency']
  ])('%s', (url) => {
    expect(repositoryOf(url)).toBe('github.com/middy-idempotency/middy-idempotency')
    expect(repositoryOf({ url })).toBe('github.com/middy-idempotency/middy-idempotency')
  })

  test('none', () => {
    expect(repositoryOf(undefined)).toBeUndefined()
    expect(repositoryOf({})).toBeUndefined()
  })
})

describe('decide', () => {
  test('a name the registry does not know (404) is free: the first publish goes ahead', () => {
    expect(decide(ours, { status: 'missing' })).toEqual({ ok: true, message: expect.stringContaining('free for a first publish of 0.2.0') })
  })

  test('a name published from our repository is ours: a new version goes ahead', () => {
    const manifest = { repository: { url: 'git+https://github.com/middy-idempotency/middy-idempotency.git' }, version: '0.1.0', versions: ['0.1.0'] }
    expect(decide(ours, { status: 'found', manifest })).toEqual({ ok: true, message: expect.stringContaining('is ours') })
  })

  test('a version of ours already on the registry stops the release', () => {
    const manifest = { repository: 'github:middy-idempotency/middy-idempotency', version: '0.2.0', versions: '0.2.0' }
    expect(decide(ours, { status: 'found', manifest })).toEqual({ ok: false, message: 'middy-idempotency@0.2.0 is already published: bump the version (and tag v<version>) first.' })
  })

  test('a name published from another repository stops the release and says how to publish under a scope', () => {
    const manifest = { repository: { url: 'git+https://github.com/rdt712/middy-idempotency.git' }, version: '0.0.3', versions: ['0.0.3'] }
    const { ok, message } = decide(ours, { status: 'found', manifest })
    expect(ok).toBe(false)
    expect(message).toBe('the npm name middy-idempotency is taken by another package (repository github.com/rdt712/middy-idempotency, latest 0.0.3), ' +
      'not github.com/middy-idempotency/middy-idempotency. To publish under a scope instead, see CONTRIBUTING.md, "Publishing".')
  })

  test('a name published without a repository is not taken for ours', () => {
    expect(decide(ours, { status: 'found', manifest: { version: '1.0.0', versions: ['1.0.0'] } })).toEqual({ ok: false, message: expect.stringContaining('repository not stated') })
  })

  test('a registry that could not be asked stops the release rather than guessing', () => {
    expect(decide(ours, { status: 'error', detail: 'ETIMEDOUT' })).toEqual({ ok: false, message: 'could not ask the npm registry about middy-idempotency: ETIMEDOUT' })
  })

  test('a package.json without a repository cannot tell ours from theirs', () => {
    expect(decide({ name: 'middy-idempotency', version: '0.2.0' }, { status: 'missing' })).toEqual({ ok: false, message: expect.stringContaining('package.json has no repository') })
  })
})
