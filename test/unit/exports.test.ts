import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { exportsUsedNowhere } from '../helpers/check-exports.js'

/**
 * Exports of the process module that only its own tests and fixtures use; their tests are to go through
 * stopProcessTree's pure parts. Nothing may be added here.
 */
const KNOWN = ['process/stop.ts: isAlive', 'process/tree.ts: snapshotTree']

// docs/design.md ("git"): nothing in src/ exists only for tests.
describe('exports', () => {
  test('every value src/ exports is used in src/', () => {
    const found = exportsUsedNowhere(join(import.meta.dirname, '../../src'))
    expect(found.filter((entry) => !KNOWN.includes(entry))).toEqual([])
  })

  test('the check finds an export nothing uses, and not one that is used', () => {
    expect(exportsUsedNowhere(join(import.meta.dirname, '../fixtures/exports'))).toEqual([
      'unused.ts: onlyForTests',
    ])
  })
})
