import { spawnSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { FAST_LANE, startsInFastLane } from '../helpers/fast-lane.js'

describe('the fast lane starts no process but git', () => {
  test('git by name or path only', () => {
    expect(startsInFastLane('git')).toBe(true)
    expect(startsInFastLane('/usr/bin/git')).toBe(true)
    for (const other of ['sh', 'bash', 'node', '/usr/bin/true', 'gitk', undefined]) {
      expect(startsInFastLane(other)).toBe(false)
    }
  })

  // Inside the lane (npm run test:fast) the guard itself is what is tested; in npm test, that nothing is guarded.
  test('a process but git is refused in the lane, and runs outside it', () => {
    if (FAST_LANE) {
      expect(() => spawnSync('true')).toThrow(/tag it "process"/)
      expect(spawnSync('git', ['--version']).status).toBe(0)
    } else {
      expect(spawnSync('true').status).toBe(0)
    }
  })
})
