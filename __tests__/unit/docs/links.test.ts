import { expect, test } from '@jest/globals'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { userDocs } from './markdown.js'

/** The docs moved between files: every relative link, and its #anchor, still lands somewhere. */
const root = process.cwd()
const files = [...userDocs(root), 'CONTRIBUTING.md']

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')

const anchorsOf = (file: string): Set<string> =>
  new Set(readFileSync(join(root, file), 'utf8').split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, ''))))

test('every relative link of the README, docs/ and CONTRIBUTING.md points to a file, and to a heading of it', () => {
  const broken: string[] = []
  for (const file of files) {
    // Code spans and blocks hold examples, not links.
    const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
    for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const [path = '', anchor] = target.split('#')
      const resolved = path === '' ? file : normalize(join(dirname(file), path))
      if (!existsSync(join(root, resolved))) broken.push(`${file}: ${target} (no ${resolved})`)
      else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${target} (no heading)`)
    }
  }
  expect(broken).toEqual([])
})
