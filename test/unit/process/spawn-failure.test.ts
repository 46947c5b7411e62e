import { spawnSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { spawnFailure } from '../../../src/process/supervisor.js'

describe('why an agent could not be started', () => {
  test('an argument list too long for the kernel is said in those words', { tags: ['process'] }, () => {
    // A single argument over the kernel's 128 KiB limit: the real error, not a made-up one.
    const real = spawnSync('true', ['x'.repeat(200 * 1024)])
    expect((real.error as NodeJS.ErrnoException | undefined)?.code).toBe('E2BIG')
    expect(spawnFailure({ cause: real.error })).toMatch(/^argument list too long \(E2BIG\)/)
  })

  test('a missing or non-executable command says which', () => {
    const missing = Object.assign(new Error('spawn nope ENOENT'), { code: 'ENOENT', path: 'nope' })
    expect(spawnFailure({ cause: missing })).toBe('command not found: nope')
    const denied = Object.assign(new Error('spawn ./x EACCES'), { code: 'EACCES', path: './x' })
    expect(spawnFailure({ cause: denied })).toBe('permission denied: ./x')
  })
})
