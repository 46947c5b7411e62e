import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { recordPath, setLastActive } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

interface Reason {
  code: string
  kind: string
}
interface Report {
  removed: { id?: string; path?: string | null }[]
  kept: { id?: string; path?: string | null; reasons: Reason[] }[]
  snapshots: { refs: { worktree?: string; branch?: string }; restore: string[] }[]
  registrations?: string[]
}

const DAY = 24 * 3_600_000

type Repo = ReturnType<typeof tmpGitRepo>

async function harness(repo: Repo, ...args: string[]) {
  const result = await cli([...args, '--json'], { cwd: repo.dir, env: repo.env })
  expect(result.exitCode, result.stderr).toBe(0)
  return json<Report>(result)
}

/** Whether `commit` is reachable from any ref or worktree HEAD (what gc keeps). */
function reachable(repo: Repo, commit: string): boolean {
  const unreachable = execFileSync('git', ['fsck', '--unreachable', '--no-reflogs'], {
    cwd: repo.dir,
    env: repo.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  return !unreachable.includes(commit)
}

/** A worktree on a detached HEAD with a commit no branch has, whose folder was then deleted. */
function detachedThenGone(repo: Repo, path: string): string {
  repo.git('worktree', 'add', '-q', '--detach', path)
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'only here'], { cwd: path, env: repo.env })
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: path, env: repo.env, encoding: 'utf8' })
  rmSync(path, { recursive: true, force: true })
  return head.trim()
}

describe('cleanup, delete and prune: review cases', () => {
  test('--force never removes a worktree holding a nested repository (a snapshot cannot keep it)', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(
      repo,
      'mkdir nested && cd nested && git init -q && echo precious > p.txt && git add p.txt && git commit -qm work',
    )
    setLastActive(repo, session.id, 8 * DAY)
    const report = await harness(repo, 'session', 'cleanup', '--force')
    expect(report.removed).toEqual([])
    expect(report.kept[0]?.reasons.map((r) => [r.code, r.kind])).toContainEqual(['NESTED_REPO', 'blocked'])
    expect(existsSync(join(session.worktree_dir, 'nested', 'p.txt'))).toBe(true)
    expect(existsSync(recordPath(repo, session.id))).toBe(true)
  })

  test('a session whose worktree folder is gone keeps its detached HEAD: kept, --force stores it', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(
      repo,
      'git checkout -q --detach && git commit -q --allow-empty -m mine',
    )
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: session.worktree_dir,
      env: repo.env,
      encoding: 'utf8',
    }).trim()
    rmSync(session.worktree_dir, { recursive: true, force: true })
    setLastActive(repo, session.id, 8 * DAY)

    const kept = await harness(repo, 'session', 'cleanup')
    expect(kept.removed).toEqual([])
    expect(kept.kept[0]?.reasons.map((r) => r.code)).toEqual(['DETACHED_HEAD'])
    expect(reachable(repo, head)).toBe(true)

    const forced = await harness(repo, 'session', 'cleanup', '--force')
    expect(forced.removed).toHaveLength(1)
    expect(forced.snapshots[0]?.refs.worktree).toBe(`refs/harness/${session.id}/worktree`)
    expect(repo.git('rev-parse', `refs/harness/${session.id}/worktree`)).toBe(head)
    expect(reachable(repo, head)).toBe(true)
  })

  test('prune does not drop a folder-less registration whose detached HEAD no branch contains', async () => {
    const repo = tmpGitRepo()
    const outside = detachedThenGone(repo, join(repo.dir, '..', 'user-worktree'))
    mkdirSync(join(repo.dir, '.harness', 'worktrees'), { recursive: true })
    const orphan = detachedThenGone(repo, join(repo.dir, '.harness', 'worktrees', 'orphan'))

    const kept = await harness(repo, 'session', 'prune')
    expect(kept.registrations).toEqual([])
    expect(kept.kept.map((k) => k.reasons[0]?.code)).toEqual(['DETACHED_HEAD', 'DETACHED_HEAD'])
    expect(reachable(repo, outside)).toBe(true)
    expect(reachable(repo, orphan)).toBe(true)

    const forced = await harness(repo, 'session', 'prune', '--force')
    expect(forced.removed.map((r) => r.path)).toEqual([join(repo.dir, '.harness', 'worktrees', 'orphan')])
    expect(repo.git('rev-parse', 'refs/harness/orphan/worktree')).toBe(orphan)
    // Not harness's own: its registration stays, and so do its commits.
    expect(reachable(repo, outside)).toBe(true)
  })

  test('--force snapshot restores names with spaces, newlines and unicode, modes and symlinks exactly', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(
      repo,
      `printf a > 'sp ace.txt'; printf b > "$(printf 'new\\nline')"; printf c > ünï.txt; printf '#!/bin/sh\\n' > run.sh; chmod +x run.sh; ln -s README.md link; mkdir -p u/v; printf d > u/v/w; git rm -q README.md; printf s > staged; git add staged; printf i > x.log`,
    )
    writeFileSync(join(repo.dir, '.git', 'info', 'exclude'), '*.log\n')
    setLastActive(repo, session.id, 8 * DAY)
    const report = await harness(repo, 'session', 'cleanup', '--force')
    expect(report.removed).toHaveLength(1)
    expect(existsSync(session.worktree_dir)).toBe(false)
    const restore = report.snapshots[0]?.restore.find((c) => c.includes('worktree add'))
    expect(restore).toBeDefined()
    execFileSync('sh', ['-c', restore ?? 'false'], { env: repo.env, stdio: 'ignore' })
    const tree = repo.git('ls-tree', '-r', `refs/harness/${session.id}/worktree`)
    expect(tree).toMatch(/^100755 blob \S+\trun\.sh$/m)
    expect(tree).toMatch(/^120000 blob \S+\tlink$/m)
    expect(tree).not.toMatch(/README\.md|x\.log/)
    for (const name of ['sp ace.txt', 'new\nline', 'ünï.txt', 'u/v/w', 'staged']) {
      expect(existsSync(join(session.worktree_dir, name)), name).toBe(true)
    }
    expect(lstatSync(join(session.worktree_dir, 'run.sh')).mode & 0o111).not.toBe(0)
    expect(lstatSync(join(session.worktree_dir, 'link')).isSymbolicLink()).toBe(true)
    expect(existsSync(join(session.worktree_dir, 'README.md'))).toBe(false)
  })

  test('an edit hidden behind assume-unchanged or skip-worktree is dirty, and --force keeps it', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(
      repo,
      'git update-index --assume-unchanged README.md && echo hidden-edit > README.md && echo a > b.txt && git add b.txt && git -c user.name=a -c user.email=a@b commit -qm b && git update-index --skip-worktree b.txt && echo hidden-too > b.txt',
    )
    expect(
      execFileSync('git', ['status', '--porcelain'], {
        cwd: session.worktree_dir,
        env: repo.env,
        encoding: 'utf8',
      }),
    ).toBe('')
    setLastActive(repo, session.id, 8 * DAY)
    const plain = await harness(repo, 'session', 'cleanup')
    expect(plain.removed).toEqual([])
    expect(plain.kept[0]?.reasons.map((r) => r.code)).toContain('DIRTY')
    const forced = await harness(repo, 'session', 'cleanup', '--force')
    expect(forced.removed).toHaveLength(1)
    expect(repo.git('show', `refs/harness/${session.id}/worktree:README.md`)).toBe('hidden-edit')
    expect(repo.git('show', `refs/harness/${session.id}/worktree:b.txt`)).toBe('hidden-too')
  })
})
