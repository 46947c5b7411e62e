import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { branchExists, recordPath, stateOf } from '../helpers/sessions.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../helpers/tmp.js'

interface Item {
  kind: 'worktree' | 'branch' | 'folder'
  path: string | null
  branch: string | null
  reasons?: { code: string; kind: string; message: string }[]
  merged_into?: string | null
  forced?: boolean
}
interface PruneReport {
  dry_run: boolean
  older_than: string
  worktree_root: string
  removed: Item[]
  kept: Item[]
  snapshots: { name: string; refs: { worktree?: string; branch?: string }; restore: string[] }[]
  registrations: string[]
}

const root = (repo: TmpRepo) => join(repo.dir, '.harness', 'worktrees')

async function prune(repo: TmpRepo, ...args: string[]): Promise<PruneReport> {
  const result = await cli(['session', 'prune', '--json', ...args], { cwd: repo.dir, env: repo.env })
  expect(result.exitCode, result.stderr).toBe(0)
  return json<PruneReport>(result)
}

/** An orphan: a harness/<name> branch checked out in <root>/<name>, made with plain git, no record. */
function orphan(repo: TmpRepo, name: string, at = join(root(repo), name)): string {
  repo.git('worktree', 'add', '-q', '-b', `harness/${name}`, at)
  return at
}

describe('harness session prune', () => {
  test('removes an orphan harness/* branch and its worktree; never what a record owns', async () => {
    const repo = tmpGitRepo()
    const owned = await finishedSession(repo)
    const dirtyOwned = await finishedSession(repo, 'echo wip > wip.txt')
    const path = orphan(repo, 'x')
    repo.git('branch', 'harness/plain') // an orphan branch with no worktree, no commits of its own
    repo.git('branch', 'feature') // not harness/*: never touched
    const userWorktree = join(tmpDir(), 'mine')
    repo.git('worktree', 'add', '-q', '-b', 'mine', userWorktree)
    const report = await prune(repo, '--older-than', '0')
    expect(report).toMatchObject({ dry_run: false, older_than: '0d', worktree_root: root(repo), kept: [] })
    expect(report.removed).toEqual([
      { kind: 'worktree', path, branch: 'harness/x', forced: false },
      {
        kind: 'branch',
        path: null,
        branch: 'harness/plain',
        commit: expect.any(String),
        merged_into: 'main',
        forced: false,
      },
      {
        kind: 'branch',
        path: null,
        branch: 'harness/x',
        commit: expect.any(String),
        merged_into: 'main',
        forced: false,
      },
    ])
    expect(existsSync(path)).toBe(false)
    expect(branchExists(repo, 'harness/x')).toBe(false)
    expect(branchExists(repo, 'harness/plain')).toBe(false)
    expect(branchExists(repo, 'feature')).toBe(true)
    expect(existsSync(userWorktree)).toBe(true)
    for (const session of [owned, dirtyOwned]) {
      expect(existsSync(session.worktree_dir)).toBe(true)
      expect(branchExists(repo, `harness/${session.id}`)).toBe(true)
      expect(existsSync(recordPath(repo, session.id))).toBe(true)
    }
    const worktrees = repo.git('worktree', 'list', '--porcelain')
    expect(worktrees).toContain(`worktree ${repo.dir}\n`)
    expect(worktrees).not.toContain(path)
  })

  test('dirty and unmerged orphans are kept unless --force, which snapshots them first', async () => {
    const repo = tmpGitRepo()
    const dirty = orphan(repo, 'dirty')
    writeFileSync(join(dirty, 'draft.txt'), 'draft\n')
    const ahead = orphan(repo, 'ahead')
    writeFileSync(join(ahead, 'done.txt'), 'done\n')
    repo.git('-C', ahead, 'add', 'done.txt')
    repo.git('-C', ahead, 'commit', '-qm', 'done')
    const tip = repo.git('rev-parse', 'harness/ahead')

    const kept = await prune(repo, '--older-than', '0')
    expect(kept.removed).toEqual([{ kind: 'worktree', path: ahead, branch: 'harness/ahead', forced: false }])
    expect(kept.kept).toEqual([
      {
        kind: 'worktree',
        path: dirty,
        branch: 'harness/dirty',
        reasons: [
          { code: 'DIRTY', kind: 'unsafe', message: `worktree ${dirty} has 1 uncommitted or untracked file` },
        ],
      },
      {
        kind: 'branch',
        path: null,
        branch: 'harness/ahead',
        reasons: [
          {
            code: 'UNMERGED',
            kind: 'unsafe',
            message: 'branch harness/ahead has 1 commit not merged into main',
          },
        ],
      },
      {
        kind: 'branch',
        path: null,
        branch: 'harness/dirty',
        reasons: [
          {
            code: 'BRANCH_CHECKED_OUT',
            kind: 'blocked',
            message: `branch harness/dirty is checked out in ${dirty}`,
          },
        ],
      },
    ])
    expect(readFileSync(join(dirty, 'draft.txt'), 'utf8')).toBe('draft\n')
    expect(repo.git('rev-parse', 'harness/ahead')).toBe(tip)

    const forced = await prune(repo, '--older-than', '0', '--force')
    expect(forced.kept).toEqual([])
    expect(forced.removed.map((i) => [i.kind, i.branch, i.forced])).toEqual([
      ['worktree', 'harness/dirty', true],
      ['branch', 'harness/ahead', true],
      ['branch', 'harness/dirty', false],
    ])
    expect(forced.snapshots.map((s) => [s.name, s.refs])).toEqual([
      ['dirty', { worktree: 'refs/harness/dirty/worktree' }],
      ['ahead', { branch: 'refs/harness/ahead/branch' }],
    ])
    expect(repo.git('show', 'refs/harness/dirty/worktree:draft.txt')).toBe('draft')
    expect(repo.git('rev-parse', 'refs/harness/ahead/branch')).toBe(tip)
    expect(forced.snapshots[1]?.restore).toEqual([
      `git -C ${repo.dir} branch restore-ahead refs/harness/ahead/branch`,
    ])
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
  })

  test('folders under the worktree root: an empty one goes, one with files is reported and left alone', async () => {
    const repo = tmpGitRepo()
    await finishedSession(repo) // creates .harness and the worktree root
    const empty = join(root(repo), 'empty')
    const full = join(root(repo), 'full')
    mkdirSync(empty)
    mkdirSync(full)
    writeFileSync(join(full, 'keep.txt'), 'keep\n')
    // A registration whose folder is gone: `git worktree prune` drops it.
    const vanished = orphan(repo, 'vanished')
    repo.git('worktree', 'lock', vanished) // locked: prune must keep it
    const report = await prune(repo, '--older-than', '0')
    expect(report.removed).toContainEqual({ kind: 'folder', path: empty, branch: null, forced: false })
    expect(report.kept).toContainEqual({
      kind: 'folder',
      path: full,
      branch: null,
      reasons: [
        { code: 'NOT_A_WORKTREE', kind: 'blocked', message: `${full} is not a git worktree: left alone` },
      ],
    })
    expect(report.kept).toContainEqual(
      expect.objectContaining({
        kind: 'worktree',
        path: vanished,
        reasons: [expect.objectContaining({ code: 'LOCKED' })],
      }),
    )
    expect(existsSync(empty)).toBe(false)
    expect(readFileSync(join(full, 'keep.txt'), 'utf8')).toBe('keep\n')
    expect(existsSync(vanished)).toBe(true)

    // Unlocked and deleted by hand: only the registration is left, and git's own prune drops it.
    repo.git('worktree', 'unlock', vanished)
    repo.git('-C', vanished, 'status') // still a worktree
    const { rmSync } = await import('node:fs')
    rmSync(vanished, { recursive: true, force: true })
    const after = await prune(repo, '--older-than', '0')
    expect(after.registrations.join('\n')).toContain('vanished')
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain(vanished)
    expect(branchExists(repo, 'harness/vanished')).toBe(false)
  })

  test('fresh orphans are left alone by default (a run may still be setting up); --dry-run changes nothing', async () => {
    const repo = tmpGitRepo()
    await finishedSession(repo)
    const path = orphan(repo, 'fresh')
    const report = await prune(repo)
    expect(report.older_than).toBe('1h')
    expect(report.removed).toEqual([])
    expect(report.kept.map((i) => [i.kind, i.reasons?.[0]?.code])).toEqual([
      ['worktree', 'TOO_RECENT'],
      ['branch', 'BRANCH_CHECKED_OUT'],
    ])
    expect(existsSync(path)).toBe(true)

    const before = stateOf(repo)
    const dry = await prune(repo, '--older-than', '0', '--dry-run')
    expect(dry.dry_run).toBe(true)
    expect(dry.removed.map((i) => i.kind)).toEqual(['worktree', 'branch'])
    expect(stateOf(repo)).toBe(before)
    const human = await cli(['session', 'prune', '--older-than', '0', '--dry-run'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(human.stdout).toContain('Dry run: nothing was changed.\nWould remove:')
    expect(stateOf(repo)).toBe(before)
  })

  test('a record that cannot be read still owns harness/<id> and <root>/<id>', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    writeFileSync(recordPath(repo, session.id), '{ not json')
    const result = await cli(['session', 'prune', '--older-than', '0', '--json'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(result.exitCode).toBe(0)
    expect(result.stderr).toContain('not valid JSON')
    expect(json<PruneReport>(result).removed).toEqual([])
    expect(existsSync(session.worktree_dir)).toBe(true)
    expect(branchExists(repo, `harness/${session.id}`)).toBe(true)
  })
})
