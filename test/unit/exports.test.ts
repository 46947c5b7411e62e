import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { exportsUsedNowhere, exportsUsedOnlyAtHome, HOME_ONLY_IN_FLIGHT } from '../helpers/check-exports.js'

const root = join(import.meta.dirname, '../..')
const fixtures = join(import.meta.dirname, '../fixtures')

// docs/development/design.md ("git"): nothing in src/ exists only for tests, and nothing is exported that
// only its own module uses.
describe('exports', () => {
  test('every value src/ exports is used in src/', () => {
    expect(exportsUsedNowhere(join(root, 'src'))).toEqual([])
  })

  test('every value src/ exports is used outside its own module (in src/, test/ or bench/)', () => {
    const homeOnly = exportsUsedOnlyAtHome(join(root, 'src'), [join(root, 'test'), join(root, 'bench')])
    expect(homeOnly.filter((entry) => !HOME_ONLY_IN_FLIGHT.includes(entry))).toEqual([])
    // The list of exports waiting on another change only shrinks: an entry that is done must go.
    expect(HOME_ONLY_IN_FLIGHT.filter((entry) => !homeOnly.includes(entry))).toEqual([])
  })

  test('the check finds an export nothing uses, and not one that is used', () => {
    expect(exportsUsedNowhere(join(fixtures, 'exports'))).toEqual(['unused.ts: onlyForTests'])
  })

  test('the check finds an export only its own module uses, and counts a use from a test', () => {
    expect(exportsUsedOnlyAtHome(join(fixtures, 'exports'), [])).toEqual([
      'unused.ts: onlyForTests',
      'unused.ts: usedHere',
    ])
    expect(exportsUsedOnlyAtHome(join(fixtures, 'exports'), [join(fixtures, 'exports-tests')])).toEqual([
      'unused.ts: onlyForTests',
    ])
  })
})
