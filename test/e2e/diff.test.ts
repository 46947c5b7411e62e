import { describe, expect, test } from 'vitest'
import type { SessionDiff } from '../../src/sessions/work/diff.js'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { tmpGitRepo, tmpPlainDir } from '../helpers/tmp.js'

/** What `session diff --json` prints. */
type DiffJson = SessionDiff

const WORK = [
  'printf "committed\\n" > committed.txt && git add committed.txt && git commit -qm committed',
  'printf "edited\\n" >> README.md',
  'printf "untracked\\n" > untracked.txt',
  'mkdir -p build && printf "ignored\\n" > build/out.o',
].join(' && ')

function repoWithIgnore() {
  const repo = tmpGitRepo()
  repo.write('.gitignore', 'build/\n')
  repo.git('add', '-A')
  repo.git('commit', '-qm', 'ignore build')
  return repo
}

describe('harness session diff', () => {
  test('committed, uncommitted and untracked changes against base_commit; --stat, --name-only, --json', async () => {
    const repo = repoWithIgnore()
    const session = await finishedSession(repo, WORK)
    const base = repo.git('rev-parse', 'HEAD')
    const opts = { cwd: repo.dir, env: repo.env }

    const patch = await cli(['session', 'diff', session.id], opts)
    expect(patch.exitCode, patch.stderr).toBe(0)
    expect(patch.stderr).toBe('')
    expect(patch.stdout).toContain('diff --git a/README.md b/README.md')
    expect(patch.stdout).toContain('+edited')
    expect(patch.stdout).toContain('diff --git a/committed.txt b/committed.txt')
    expect(patch.stdout).toContain('+untracked')
    expect(patch.stdout).not.toContain('ignored')

    const names = await cli(['session', 'diff', session.id, '--name-only'], opts)
    expect(names.stdout).toBe('README.md\ncommitted.txt\nuntracked.txt\n')

    const stat = await cli(['session', 'diff', session.id, '--stat'], opts)
    expect(stat.stdout).toMatch(/README\.md\s+\| 1 \+/)
    expect(stat.stdout).toContain('3 files changed, 3 insertions(+)')

    const asJson = json<DiffJson>(await cli(['session', 'diff', session.id, '--json'], opts))
    expect(asJson).toMatchObject({
      id: session.id,
      base_commit: base,
      source: 'worktree',
      files: ['README.md', 'committed.txt', 'untracked.txt'],
      worktree: session.worktree_dir,
      branch: `harness/${session.id}`,
    })
    expect(asJson.diff).toBe(patch.stdout)
    const statJson = json<DiffJson>(await cli(['session', 'diff', session.id, '--stat', '--json'], opts))
    expect(statJson.stat).toBe(stat.stdout)
    expect(statJson.diff).toBeUndefined()

    // Diffing changes nothing: the worktree's index and status are as they were.
    expect(repo.git('-C', session.worktree_dir, 'status', '--porcelain')).toBe(
      'M README.md\n?? untracked.txt',
    )
  })

  test('after the worktree is gone, the branch is diffed and stderr says so; nothing left is exit 4', async () => {
    const repo = repoWithIgnore()
    const session = await finishedSession(repo, WORK)
    repo.git('worktree', 'remove', '--force', session.worktree_dir)
    const opts = { cwd: repo.dir, env: repo.env }
    const diff = await cli(['session', 'diff', session.id, '--name-only'], opts)
    expect(diff.exitCode, diff.stderr).toBe(0)
    expect(diff.stdout).toBe('committed.txt\n')
    expect(diff.stderr).toContain(`the worktree of session ${session.id} is gone`)
    expect(diff.stderr).toContain(`harness/${session.id}`)
    const asJson = json<DiffJson>(await cli(['session', 'diff', session.id, '--json'], opts))
    expect(asJson).toMatchObject({ source: 'branch', files: ['committed.txt'] })
    expect(asJson.diff).toContain('+committed')

    repo.git('branch', '-D', `harness/${session.id}`)
    const nothing = await cli(['session', 'diff', session.id], opts)
    expect(nothing.exitCode).toBe(4)
    expect(nothing.stdout).toBe('')
    expect(nothing.stderr).toContain(`session "${session.id}" has nothing to diff`)
    const nothingJson = await cli(['session', 'diff', session.id, '--json'], opts)
    expect(nothingJson.exitCode).toBe(4)
    expect(JSON.parse(nothingJson.stderr)).toMatchObject({ error: { code: 'NOTHING_TO_DIFF', exit_code: 4 } })
  })

  // --stat with --name-only: test/unit/cli/command-seam.test.ts.
  test('a session without changes, and sessions outside git', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    const empty = await cli(['session', 'diff', session.id], { cwd: repo.dir, env: repo.env })
    expect(empty.exitCode).toBe(0)
    expect(empty.stdout).toBe('')

    const plain = tmpPlainDir()
    const run = await cli(['run', '-a', 'exec', '--json', '--', 'true'], { cwd: plain.dir, env: plain.env })
    const id = json<{ id: string }>(run).id
    const outside = await cli(['session', 'diff', id], { cwd: plain.dir, env: plain.env })
    expect(outside.exitCode).toBe(4)
    expect(outside.stderr).toContain('has no base commit')
    const missing = await cli(['session', 'diff', 'nope1234'], { cwd: plain.dir, env: plain.env })
    expect(missing.exitCode).toBe(3)
  })
})
