import { describe, expect, test } from 'vitest'
import { displayWidth, paint, truncate } from '../../../src/render/text.js'

describe('terminal text', () => {
  test('width counts terminal columns: wide characters two, colour codes none', () => {
    expect(displayWidth('abc')).toBe(3)
    expect(displayWidth('日本語')).toBe(6)
    expect(displayWidth(paint('ok', 'green', true))).toBe(2)
    expect(displayWidth('')).toBe(0)
  })

  test('truncate cuts to the width with a marker, never splitting a wide character', () => {
    expect(truncate('short', 10)).toBe('short')
    expect(truncate('exactly10!', 10)).toBe('exactly10!')
    expect(truncate('a longer task description', 10)).toBe('a longer …')
    expect(displayWidth(truncate('a longer task description', 10))).toBe(10)
    // 日本語テキスト: each character two columns; 4 columns + "…" fit in 6, a third character would not.
    expect(truncate('日本語テキスト', 6)).toBe('日本…')
    expect(displayWidth(truncate('日本語テキスト', 6))).toBeLessThanOrEqual(6)
    expect(truncate('line one\nline two', 40)).toBe('line one line two')
    expect(truncate('anything', 0)).toBe('')
  })
})
