import { describe, expect, test } from 'vitest'
import { InvalidSessionIdError } from '../../../../src/errors.js'
import {
  assertValidSessionId,
  generateSessionId,
  resolveIdAmong,
} from '../../../../src/sessions/record/ids.js'

describe('session ids', () => {
  test('generated ids are 8 lowercase hex characters and distinct', async () => {
    const ids = new Set<string>()
    for (let i = 0; i < 500; i++) {
      const id = await generateSessionId()
      expect(id).toMatch(/^[0-9a-f]{8}$/)
      ids.add(id)
    }
    expect(ids.size).toBe(500)
  })

  test.each(['3f9a12c8', 'my-task_1', 'A', 'x'.repeat(64)])('accepts %s', (id) => {
    expect(assertValidSessionId(id)).toBe(id)
  })

  test.each([
    '',
    '../x',
    'a/b',
    'a..b',
    '.hidden',
    '-flag',
    '_x',
    'x'.repeat(65),
    'x'.repeat(300),
    'a b',
    'é',
    'a\nb',
  ])('rejects %j as a usage error', (id) => {
    expect(() => assertValidSessionId(id)).toThrow(InvalidSessionIdError)
    try {
      assertValidSessionId(id)
    } catch (error) {
      expect((error as InvalidSessionIdError).exitCode).toBe(2)
    }
  })

  test('resolution: exact, unique prefix, ambiguous, none, too short', () => {
    const known = ['3f9a12c8', '3f9a99aa', 'abcd1234', 'abc']
    expect(resolveIdAmong('abc', known)).toEqual({ kind: 'exact', id: 'abc' })
    expect(resolveIdAmong('abcd', known)).toEqual({ kind: 'unique', id: 'abcd1234' })
    expect(resolveIdAmong('3f9a', known)).toEqual({ kind: 'ambiguous', candidates: ['3f9a12c8', '3f9a99aa'] })
    expect(resolveIdAmong('3f9a1', known)).toEqual({ kind: 'unique', id: '3f9a12c8' })
    expect(resolveIdAmong('3f9', known)).toEqual({ kind: 'none' })
    expect(resolveIdAmong('ffff', known)).toEqual({ kind: 'none' })
  })
})
