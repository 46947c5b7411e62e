import { describe, expect, test } from 'vitest'
import { ExternalToolError, IllegalStateError } from '../../../../src/errors.js'
import {
  anyFailed,
  classifyError,
  decideRemoval,
  type KeepReason,
} from '../../../../src/sessions/removal/decision.js'

const reason = (kind: KeepReason['kind'], code = kind.toUpperCase()): KeepReason => ({
  code,
  kind,
  message: code,
})

describe('decideRemoval: the one keep/remove rule', () => {
  test('nothing against it: removed, not forced', () => {
    expect(decideRemoval([], false)).toEqual({ action: 'remove', forced: false })
    expect(decideRemoval([], true)).toEqual({ action: 'remove', forced: false })
  })
  test('unsafe only: kept, unless --force, which removes it forced', () => {
    const unsafe = [reason('unsafe', 'DIRTY'), reason('unsafe', 'UNMERGED')]
    expect(decideRemoval(unsafe, false)).toEqual({ action: 'keep' })
    expect(decideRemoval(unsafe, true)).toEqual({ action: 'remove', forced: true })
  })
  test('anything blocked or failed: kept even with --force', () => {
    for (const kind of ['blocked', 'error'] as const) {
      expect(decideRemoval([reason(kind)], true)).toEqual({ action: 'keep' })
      expect(decideRemoval([reason('unsafe'), reason(kind)], true)).toEqual({ action: 'keep' })
    }
  })
})

describe('classifyError: one classification for every planner', () => {
  test('safety refusals are blocked (exit 0), failures are errors (exit 1)', () => {
    for (const code of [
      'BRANCH_MOVED',
      'SESSION_CHANGED',
      'WORKTREE_LOCKED',
      'MAIN_WORKTREE',
      'SESSION_RUNNING',
    ] as const) {
      expect(classifyError(new IllegalStateError('no', undefined, code)).kind).toBe('blocked')
    }
    const failed = classifyError(
      new ExternalToolError('git worktree remove failed: x', undefined, 'GIT_FAILED'),
    )
    expect(failed).toEqual({ code: 'GIT_FAILED', kind: 'error', message: 'git worktree remove failed: x' })
    expect(classifyError(new Error('EIO'))).toEqual({ code: 'UNEXPECTED', kind: 'error', message: 'EIO' })
    expect(classifyError('odd')).toEqual({ code: 'UNEXPECTED', kind: 'error', message: 'odd' })
  })
  test('anyFailed: only errors fail a command', () => {
    expect(anyFailed([{ reasons: [reason('blocked'), reason('unsafe')] }])).toBe(false)
    expect(anyFailed([{ reasons: [reason('blocked')] }, { reasons: [reason('error')] }])).toBe(true)
  })
})
