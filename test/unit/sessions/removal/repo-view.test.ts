import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { HarnessError } from '../../../../src/errors.js'
import { listRefs } from '../../../../src/git/refs.js'
import { branchesMergedInto, onSomeBranch, readRemovalState } from '../../../../src/git/removal.js'
import { branchCreatedAt, countCommitsNotIn, deleteBranch, isAncestor } from '../../../../src/git/repo.js'
import { removeListedWorktree } from '../../../../src/git/worktree.js'
import { RepoCache } from '../../../../src/sessions/removal/repo-view.js'
import { tmpDir, tmpGitRepo } from '../../../helpers/tmp.js'

function commitOn(repo: ReturnType<typeof tmpGitRepo>, dir: string, file: string): string {
  repo.git('-C', dir, 'commit', '-q', '--allow-empty', '-m', file)
  return repo.git('-C', dir, 'rev-parse', 'HEAD')
}

describe('git removal helpers', () => {
  test('readRemovalState: branches, remotes, config sections, the main branch and its upstream', async () => {
    const repo = tmpGitRepo()
    const env = { env: repo.env }
    repo.git('branch', 'harness/a')
    repo.git('update-ref', 'refs/remotes/origin/main', 'HEAD')
    repo.git('config', 'remote.origin.url', repo.dir)
    repo.git('config', 'remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*')
    repo.git('config', 'branch.main.remote', 'origin')
    repo.git('config', 'branch.main.merge', 'refs/heads/main')
    repo.git('config', 'branch.harness/a.description', 'x')
    const state = await readRemovalState(repo.dir, env)
    expect([...state.branches.keys()].sort()).toEqual(['harness/a', 'main'])
    expect([...state.remotes.keys()]).toEqual(['origin/main'])
    expect([...state.configured].sort()).toEqual(['harness/a', 'main'])
    // origin/main is one of the targets, so a branch merged there (pushed and merged) counts as merged.
    expect(state.mainTargets).toEqual(['refs/heads/main', 'refs/remotes/origin/main'])
    expect(state.worktrees.map((w) => w.isMain)).toEqual([true])
  })

  test('merge answers: merged sets, ancestry, counts, detached commits', async () => {
    const repo = tmpGitRepo()
    const env = { env: repo.env }
    const base = repo.git('rev-parse', 'HEAD')
    const wt = join(tmpDir(), 'wt')
    repo.git('worktree', 'add', '-q', '-b', 'harness/b', wt)
    const first = commitOn(repo, wt, 'one')
    commitOn(repo, wt, 'two')
    expect(await branchesMergedInto(repo.dir, 'refs/heads/main', env)).toEqual(new Set(['main']))
    expect(await branchesMergedInto(repo.dir, 'refs/heads/gone', env)).toEqual(new Set())
    expect(await isAncestor(repo.dir, base, 'refs/heads/harness/b', env)).toBe(true)
    expect(await isAncestor(repo.dir, first, 'refs/heads/main', env)).toBe(false)
    expect(await isAncestor(repo.dir, first, '0'.repeat(40), env)).toBe(false)
    expect(await countCommitsNotIn(repo.dir, 'refs/heads/harness/b', ['refs/heads/main'], env)).toBe(2)
    expect(await onSomeBranch(repo.dir, first, env)).toBe(true)
    repo.git('-C', wt, 'checkout', '-q', '--detach')
    const lost = commitOn(repo, wt, 'detached')
    expect(await onSomeBranch(repo.dir, lost, env)).toBe(false)
    expect(await branchCreatedAt(repo.dir, 'harness/b', env)).toBeInstanceOf(Date)
    expect(await branchCreatedAt(repo.dir, 'harness/none', env)).toBeNull()
  })

  test('deleteBranch is compare-and-delete; removeListedWorktree refuses dirty and locked worktrees', async () => {
    const repo = tmpGitRepo()
    const env = { env: repo.env }
    const head = repo.git('rev-parse', 'HEAD')
    const wt = join(tmpDir(), 'wt')
    repo.git('worktree', 'add', '-q', '-b', 'harness/c', wt)
    const moved = commitOn(repo, wt, 'moved')
    const error = await deleteBranch(repo.dir, 'harness/c', head, env).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HarnessError)
    expect((error as HarnessError).code).toBe('BRANCH_MOVED')
    expect(repo.git('rev-parse', 'harness/c')).toBe(moved)

    repo.git('-C', wt, 'commit', '-q', '--allow-empty', '-m', 'x')
    const entry = (await readRemovalState(repo.dir, env)).worktrees.find((w) => w.branch === 'harness/c')
    if (!entry) throw new Error('no worktree entry')
    writeFileSync(join(wt, 'new.txt'), 'new\n')
    expect(await removeListedWorktree(repo.dir, entry, env)).toBe('dirty')
    repo.git('worktree', 'lock', wt)
    const locked = (await readRemovalState(repo.dir, env)).worktrees.find((w) => w.branch === 'harness/c')
    if (!locked) throw new Error('no worktree entry')
    const refusal = await removeListedWorktree(repo.dir, locked, { ...env, force: true }).catch(
      (e: unknown) => e,
    )
    expect((refusal as HarnessError).code).toBe('WORKTREE_LOCKED')
    repo.git('worktree', 'unlock', wt)
    expect(await removeListedWorktree(repo.dir, entry, { ...env, force: true })).toBe('removed')
    const tip = repo.git('rev-parse', 'harness/c')
    expect(await deleteBranch(repo.dir, 'harness/c', tip, env)).toBe(true)
    expect(await deleteBranch(repo.dir, 'harness/c', tip, env)).toBe(false)
    repo.git('update-ref', 'refs/harness/c/branch', head)
    expect([...(await listRefs(repo.dir, 'refs/harness/c/', env)).keys()]).toEqual(['refs/harness/c/branch'])
  })
})

describe('RepoCache.prefetch', () => {
  test('the state read ahead is the one get answers with; a folder that is no repository is null', async () => {
    const repo = tmpGitRepo()
    const repos = new RepoCache(repo.dir, repo.env)
    repos.prefetch(repo.dir)
    const first = await repos.get(repo.dir)
    expect(first?.state.branches.has('main')).toBe(true)
    expect(await repos.get(repo.dir)).toBe(first)
    const plain = tmpDir()
    repos.prefetch(plain)
    repos.prefetch(join(plain, 'missing'))
    expect(await repos.get(plain)).toBeNull()
    expect(await repos.get(join(plain, 'missing'))).toBeNull()
  })
})
