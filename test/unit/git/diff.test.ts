import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { HarnessError } from '../../../src/errors.js'
import { type DiffOptions, diffReport, filesModified } from '../../../src/git/diff.js'
import { createWorktree, removeWorktree } from '../../../src/git/worktree.js'
import { tmpDir, tmpGitRepo } from '../../helpers/tmp.js'

/** A session-like worktree: one commit on its branch, then uncommitted, untracked and ignored files. */
async function session() {
  const repo = tmpGitRepo()
  repo.write('.gitignore', '*.log\n')
  repo.write('old name.txt', 'same content\nlines\n')
  repo.write('gone.txt', 'to be deleted\n')
  repo.git('add', '-A')
  repo.git('commit', '-q', '-m', 'base')
  const base = repo.git('rev-parse', 'HEAD')
  const path = join(tmpDir(), 'session wt')
  await createWorktree({ repoDir: repo.dir, path, branch: 'harness/d1', base, env: repo.env })
  const wt = (...args: string[]) => execFileSync('git', args, { cwd: path, env: repo.env, encoding: 'utf8' })
  writeFileSync(join(path, 'committed.txt'), 'committed on the branch\n')
  wt('add', '-A')
  wt('commit', '-q', '-m', 'agent commit')
  writeFileSync(join(path, 'README.md'), '# changed, not committed\n')
  writeFileSync(join(path, 'untracked file.txt'), 'untracked\n')
  writeFileSync(join(path, 'noise.log'), 'ignored\n')
  rmSync(join(path, 'gone.txt'))
  wt('mv', 'old name.txt', 'new name.txt')
  return { repo, path, base, wt }
}

/** git's text in the requested mode (name-only: one path a line). */
async function diffAgainst(options: DiffOptions): Promise<string> {
  const report = await diffReport(options)
  return options.mode === 'name-only' ? report.files.join('\n') : report.text
}

describe('diffReport', () => {
  test('a live worktree: committed, uncommitted and untracked changes, not ignored ones', async () => {
    const { repo, path, base, wt } = await session()
    const status = wt('status', '--porcelain=v1', '--untracked-files=all')
    const index = wt('ls-files', '--stage')
    const options = { worktreeDir: path, repoDir: repo.dir, base, env: repo.env }
    const patch = await diffAgainst({ ...options, mode: 'patch' })
    expect(patch).toContain('+committed on the branch')
    expect(patch).toContain('+# changed, not committed')
    expect(patch).toContain('+untracked')
    expect(patch).toContain('-to be deleted')
    expect(patch).not.toContain('noise.log')
    const stat = await diffAgainst({ ...options, mode: 'stat' })
    expect(stat).toContain('committed.txt')
    expect(stat).toContain('untracked file.txt')
    expect(stat).toMatch(/files? changed/)
    expect((await diffAgainst({ ...options, mode: 'name-only' })).split('\n')).toEqual([
      'README.md',
      'committed.txt',
      'gone.txt',
      'new name.txt',
      'old name.txt',
      'untracked file.txt',
    ])
    // Looking never changes anything.
    expect(wt('status', '--porcelain=v1', '--untracked-files=all')).toBe(status)
    expect(wt('ls-files', '--stage')).toBe(index)
  })

  test('the worktree is gone but the branch exists: base..branch', async () => {
    const { repo, path, base } = await session()
    await removeWorktree(repo.dir, path, { env: repo.env, force: true })
    const options = { worktreeDir: path, repoDir: repo.dir, base, branch: 'harness/d1', env: repo.env }
    const patch = await diffAgainst({ ...options, mode: 'patch' })
    expect(patch).toContain('+committed on the branch')
    expect(patch).not.toContain('untracked')
    expect(await diffAgainst({ ...options, mode: 'name-only' })).toBe('committed.txt')
  })

  test('nothing to compare, and bad refs', async () => {
    const repo = tmpGitRepo()
    const missing = join(tmpDir(), 'missing')
    const error = await diffAgainst({
      worktreeDir: missing,
      repoDir: repo.dir,
      base: 'HEAD',
      mode: 'patch',
      env: repo.env,
    })
      .then(() => undefined)
      .catch((caught: unknown) => caught)
    expect(error instanceof HarnessError && error.code).toBe('NOTHING_TO_DIFF')
    for (const [base, branch, code] of [
      ['--cached', 'main', 'INVALID_REF'],
      ['HEAD', '-main', 'INVALID_REF'],
      ['HEAD', 'no-branch', 'UNKNOWN_REF'],
    ] as const) {
      const bad = await diffAgainst({ repoDir: repo.dir, base, branch, mode: 'stat', env: repo.env })
        .then(() => undefined)
        .catch((caught: unknown) => caught)
      expect(bad instanceof HarnessError && bad.code).toBe(code)
    }
  })

  test('no changes gives empty output', async () => {
    const repo = tmpGitRepo()
    const options = { worktreeDir: repo.dir, repoDir: repo.dir, base: 'HEAD', env: repo.env }
    expect(await diffAgainst({ ...options, mode: 'patch' })).toBe('')
    expect(await diffAgainst({ ...options, mode: 'name-only' })).toBe('')
  })
})

describe('filesModified', () => {
  test('sorted paths changed by commits, edits, deletions, renames (both sides) and untracked files', async () => {
    const { repo, path, base } = await session()
    expect(await filesModified(path, base, { env: repo.env })).toEqual({
      files: ['README.md', 'committed.txt', 'gone.txt', 'new name.txt', 'old name.txt', 'untracked file.txt'],
      added: ['committed.txt', 'new name.txt', 'untracked file.txt'],
      deleted: ['gone.txt', 'old name.txt'],
    })
    expect(await filesModified(path, 'harness/d1', { env: repo.env })).toEqual({
      files: ['README.md', 'gone.txt', 'new name.txt', 'old name.txt', 'untracked file.txt'],
      added: ['new name.txt', 'untracked file.txt'],
      deleted: ['gone.txt', 'old name.txt'],
    })
  })
})
