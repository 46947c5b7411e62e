import { describe, expect, test } from 'vitest'
import { parseDuration, runTimeoutFlag } from '../../src/duration.js'
import { UsageError } from '../../src/errors.js'

const S = 1000
const M = 60 * S
const H = 60 * M
const D = 24 * H

describe('parseDuration', () => {
  test.each([
    ['30', 'd', 30 * D],
    ['12h', 'd', 12 * H],
    ['2w', 'd', 14 * D],
    ['90m', 'd', 90 * M],
    ['1.5s', 's', 1500],
    ['2', 's', 2 * S],
    ['250ms', 's', 250],
    ['1h30m', 'd', 90 * M],
    ['0', 'd', 0],
    [' 7D ', 'd', 7 * D],
  ] as const)('%s (bare unit %s) = %i ms', (text, bareUnit, ms) => {
    expect(parseDuration(text, { bareUnit })).toBe(ms)
  })

  test.each([
    '',
    '-1',
    '1y',
    'abc',
    '12hh',
    '1.2.3s',
    'h',
    '5 m',
    '1e3',
    'Infinity',
    '99999999999999999999w',
  ])('rejects %j with a usage error', (text) => {
    expect(() => parseDuration(text, { bareUnit: 'd', flag: '--older-than' })).toThrow(UsageError)
  })

  test('property: n<unit> round-trips for random whole numbers in every unit', () => {
    const units = { ms: 1, s: S, m: M, h: H, d: D, w: 7 * D } as const
    for (let i = 0; i < 2000; i++) {
      const n = Math.floor(Math.random() * 100_000)
      const [unit, factor] = Object.entries(units)[Math.floor(Math.random() * 6)] as [
        keyof typeof units,
        number,
      ]
      expect(parseDuration(`${n}${unit}`, { bareUnit: 's' })).toBe(n * factor)
      const a = Math.floor(Math.random() * 100)
      const b = Math.floor(Math.random() * 100)
      expect(parseDuration(`${a}h${b}m`, { bareUnit: 's' })).toBe(a * H + b * M)
    }
  })

  test('property: random strings with characters outside the grammar are rejected', () => {
    const alphabet = 'abcxyz-+,;/!?'
    for (let i = 0; i < 2000; i++) {
      const len = 1 + Math.floor(Math.random() * 6)
      let text = String(Math.floor(Math.random() * 100))
      for (let j = 0; j < len; j++) text += alphabet[Math.floor(Math.random() * alphabet.length)]
      expect(() => parseDuration(text, { bareUnit: 'd' })).toThrow(UsageError)
    }
  })
})

describe('runTimeoutFlag (run --timeout, resume --timeout)', () => {
  test('a bare number is seconds; any length, past what one timer holds; absent is none', () => {
    expect(runTimeoutFlag('90')).toBe(90_000)
    expect(runTimeoutFlag('1.5')).toBe(1500)
    expect(runTimeoutFlag('30d')).toBe(30 * 86_400_000)
    expect(runTimeoutFlag('1h30m')).toBe(5_400_000)
    expect(runTimeoutFlag(undefined)).toBeUndefined()
  })

  test('zero, a negative or a word is a usage error naming the flag', () => {
    for (const text of ['0', '0s', '-5', 'soon', '']) {
      expect(() => runTimeoutFlag(text), text).toThrow(UsageError)
      expect(() => runTimeoutFlag(text), text).toThrow(/--timeout/)
    }
  })
})
