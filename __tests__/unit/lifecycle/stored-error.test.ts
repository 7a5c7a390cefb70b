import { describe, expect, test } from '@jest/globals'
import { toStoredError } from '../../../src/lifecycle/stored-error.js'

/** True when `text` holds no lone surrogate: every high surrogate is followed by a low one, and no low one stands alone. */
const wellFormed = (text: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)

describe('the stored error is cut at a character boundary', () => {
  // The message keeps 960 UTF-16 units before its "… (truncated …)" note: an emoji at units 959-960 straddles the cut.
  const straddling = `${'a'.repeat(959)}😀${'b'.repeat(2000)}`

  test('an emoji straddling the limit is dropped whole, never cut into a lone surrogate', () => {
    const { message } = toStoredError(new Error(straddling))
    expect(wellFormed(message)).toBe(true)
    expect(message).toBe(`${'a'.repeat(959)}… (truncated from ${straddling.length} characters)`)
  })

  test('an emoji just before the limit is kept whole', () => {
    const before = `${'a'.repeat(958)}😀${'b'.repeat(2000)}`
    expect(toStoredError(new Error(before)).message).toBe(`${'a'.repeat(958)}😀… (truncated from ${before.length} characters)`)
  })

  test('the stored JSON is valid and its UTF-8 round-trips to the same text', () => {
    const stored = toStoredError(Object.assign(new Error(straddling), { name: `${'N'.repeat(87)}😀${'N'.repeat(200)}` }))
    for (const text of [stored.name, stored.message]) {
      expect(wellFormed(text)).toBe(true)
      expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text)
    }
    expect(JSON.parse(JSON.stringify(stored))).toEqual(stored)
  })

  test('a short message is kept as it is', () => {
    expect(toStoredError(new Error('declined 😀')).message).toBe('declined 😀')
  })
})
