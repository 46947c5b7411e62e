import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import type { WorktreeInfo } from '../../../../src/git/worktree-list.js'
import {
  branchHolder,
  emptyPruneReport,
  folderReasons,
  isPrunable,
  ownedBy,
  recordOutcome,
  refName,
  worktreeOrphan,
} from '../../../../src/sessions/removal/prune.js'
import { tmpDir } from '../../../helpers/tmp.js'

// The pure parts of `session prune` (docs/development/design.md, "Removal"): what is an orphan, what keeps
// it, and how each outcome is reported. The spawned-binary tests in test/e2e/prune.test.ts keep what only git
// can show.

function worktree(path: string, branch: string | null, extra: Partial<WorktreeInfo> = {}): WorktreeInfo {
  return {
    path,
    head: 'a'.repeat(40),
    branch,
    isMain: false,
    bare: false,
    detached: branch === null,
    locked: false,
    prunable: false,
    ...extra,
  }
}

describe('prune: what is an orphan', () => {
  test('a record owns harness/<id> and <root>/<id> by its id alone, and its own branch and worktree', () => {
    const root = tmpDir()
    const owned = ownedBy(['a1', 'b2'], [{ git_branch: 'feature/x', worktree_dir: '/elsewhere/wt' }], root)
    expect([...owned.branches].sort()).toEqual(['feature/x', 'harness/a1', 'harness/b2'])
    expect(owned.paths.has(join(root, 'a1'))).toBe(true)
    expect(owned.paths.has('/elsewhere/wt')).toBe(true)
  })

  test('in scope: unowned, and on a harness/* branch or under the worktree root', () => {
    const root = tmpDir()
    const owned = ownedBy(['mine'], [], root)
    expect(isPrunable(worktree(join(root, 'stray'), 'topic'), owned, root)).toBe(true)
    expect(isPrunable(worktree('/tmp/far/away', 'harness/zz'), owned, root)).toBe(true)
    expect(isPrunable(worktree('/tmp/far/away', 'topic'), owned, root)).toBe(false)
    expect(isPrunable(worktree(join(root, 'mine'), 'topic'), owned, root)).toBe(false)
    expect(isPrunable(worktree(join(root, 'other'), 'harness/mine'), owned, root)).toBe(false)
    // The root itself is not under the root.
    expect(isPrunable(worktree(root, 'topic'), owned, root)).toBe(false)
  })

  test('a branch is held by a worktree that stays, not by one going or whose folder is gone', () => {
    const kept = worktree('/w/kept', 'harness/a')
    const going = worktree('/w/going', 'harness/b')
    const vanished = worktree('/w/vanished', 'harness/c')
    const locked = worktree('/w/unmounted', 'harness/d', { locked: true })
    const all = [kept, going, vanished, locked]
    const exists = (path: string) => path !== '/w/vanished' && path !== '/w/unmounted'
    expect(branchHolder('harness/a', all, new Set([going]), exists)).toBe(kept)
    expect(branchHolder('harness/b', all, new Set([going]), exists)).toBeUndefined()
    expect(branchHolder('harness/c', all, new Set(), exists)).toBeUndefined()
    // A locked worktree's folder may be on a device that is not mounted: it still holds its branch.
    expect(branchHolder('harness/d', all, new Set(), exists)).toBe(locked)
  })
})

describe('prune: what keeps an orphan', () => {
  test('a folder that is not empty is never removed; an empty one waits until it is old enough', () => {
    const path = join(tmpDir(), 'left')
    mkdirSync(path)
    expect(folderReasons(path, false, false, '1h').map((r) => [r.code, r.kind])).toEqual([
      ['NOT_A_WORKTREE', 'blocked'],
    ])
    expect(folderReasons(path, true, true, '1h')).toEqual([
      {
        code: 'TOO_RECENT',
        kind: 'blocked',
        message: `folder ${path} is younger than 1h (a harness run that is still setting up has no record yet)`,
      },
    ])
    expect(folderReasons(path, true, false, '1h')).toEqual([])
  })

  test("a worktree's snapshot is of its files, or of its HEAD once its folder is gone", () => {
    const entry = worktree('/w/My Folder!', 'harness/x')
    const present = worktreeOrphan('/repo', entry, [], true)
    expect(present.candidate.snapshot).toMatchObject({ name: 'My-Folder', worktreeDir: '/w/My Folder!' })
    expect(present.candidate.steps).toEqual([{ kind: 'worktree', repo: '/repo', entry }])
    const gone = worktreeOrphan('/repo', entry, [], false)
    expect(gone.candidate.snapshot).toMatchObject({ worktreeHead: entry.head })
    expect(refName('...')).toBe('worktree')
  })
})

describe('prune: the report', () => {
  test('removed, kept with its reasons, snapshots, and a session that went meanwhile', () => {
    const report = emptyPruneReport(true, { text: '2h', ms: 7_200_000 }, '/root')
    expect(report).toMatchObject({ dry_run: true, older_than: '2h', older_than_ms: 7_200_000, removed: [] })
    const orphan = worktreeOrphan('/repo', worktree('/root/a', 'harness/a'), [], true)
    const snapshot = { refs: { worktree: 'refs/harness/a/worktree' }, commits: {}, restore: [] }
    expect(recordOutcome(report, orphan, { status: 'removed', forced: true, snapshot, done: [] })).toBe(true)
    expect(report.removed).toEqual([{ kind: 'worktree', path: '/root/a', branch: 'harness/a', forced: true }])
    expect(report.snapshots).toEqual([{ name: 'a', ...snapshot }])
    const reasons = [{ code: 'DIRTY', kind: 'unsafe' as const, message: 'dirty' }]
    expect(recordOutcome(report, orphan, { status: 'kept', reasons, snapshot: null })).toBe(false)
    expect(report.kept).toEqual([{ kind: 'worktree', path: '/root/a', branch: 'harness/a', reasons }])
    expect(recordOutcome(report, orphan, { status: 'gone' })).toBe(false)
    expect(report.removed).toHaveLength(1)
  })
})
