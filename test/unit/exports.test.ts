import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { exportsUsedNowhere } from '../helpers/check-exports.js'

// docs/development/design.md ("git"): nothing in src/ exists only for tests.
describe('exports', () => {
  test('every value src/ exports is used in src/', () => {
    expect(exportsUsedNowhere(join(import.meta.dirname, '../../src'))).toEqual([])
  })

  test('the check finds an export nothing uses, and not one that is used', () => {
    expect(exportsUsedNowhere(join(import.meta.dirname, '../fixtures/exports'))).toEqual([
      'unused.ts: onlyForTests',
    ])
  })
})
