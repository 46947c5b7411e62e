import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ExitCode, HarnessError } from '../../src/errors.js'
import {
  branchExists,
  deleteBranch,
  inspectRepo,
  isMergedInto,
  listBranches,
  mergedInto,
  resolveCommit,
  unmergedCommits,
} from '../../src/git/repo.js'
import { tmpDir, tmpGitRepo, tmpPlainDir } from '../helpers/tmp.js'

async function rejection(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof HarnessError)) throw new Error(`expected a HarnessError, got ${String(error)}`)
  return error
}

/** A repo with branch `feature` holding `commits` commits beyond main. */
function repoWithFeature(commits: number) {
  const repo = tmpGitRepo()
  repo.git('branch', 'feature')
  repo.git('switch', '-q', 'feature')
  for (let i = 1; i <= commits; i++) {
    repo.write(`f${i}.txt`, `${i}\n`)
    repo.git('add', '-A')
    repo.git('commit', '-q', '-m', `feature commit ${i}`)
  }
  repo.git('switch', '-q', 'main')
  return repo
}

describe('inspectRepo', () => {
  test('at the top of the main worktree', async () => {
    const repo = tmpGitRepo()
    const info = await inspectRepo(repo.dir, { env: repo.env })
    expect(info).toEqual({
      isRepo: true,
      topLevel: repo.dir,
      mainRoot: repo.dir,
      commonDir: join(repo.dir, '.git'),
      hasCommits: true,
      head: repo.git('rev-parse', 'HEAD'),
      branch: 'main',
      relativeCwd: '',
    })
  })

  test('in a subdirectory with spaces', async () => {
    const repo = tmpGitRepo()
    const sub = join(repo.dir, 'pkg', 'my api')
    mkdirSync(sub, { recursive: true })
    const info = await inspectRepo(sub, { env: repo.env })
    expect(info.isRepo && info.relativeCwd).toBe('pkg/my api')
    expect(info.isRepo && info.topLevel).toBe(repo.dir)
  })

  test('inside a linked worktree: its own top, the main root through the common dir', async () => {
    const repo = tmpGitRepo()
    const linked = join(tmpDir(), 'linked wt')
    repo.git('worktree', 'add', '-q', '-b', 'side', linked)
    mkdirSync(join(linked, 'src'))
    const info = await inspectRepo(join(linked, 'src'), { env: repo.env })
    expect(info).toMatchObject({
      isRepo: true,
      topLevel: linked,
      mainRoot: repo.dir,
      branch: 'side',
      relativeCwd: 'src',
    })
  })

  test('a repository with a separate git dir', async () => {
    const repo = tmpGitRepo()
    const root = tmpDir()
    const work = join(root, 'work tree')
    repo.git('init', '-q', `--separate-git-dir=${join(root, 'git dir')}`, work)
    const info = await inspectRepo(work, { env: repo.env })
    expect(info).toMatchObject({
      isRepo: true,
      topLevel: work,
      mainRoot: work,
      commonDir: join(root, 'git dir'),
    })
  })

  test('inside a submodule: its own checkout is its main root', async () => {
    const repo = tmpGitRepo()
    const lib = tmpGitRepo()
    repo.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib.dir, 'vendor/lib')
    const sub = join(repo.dir, 'vendor', 'lib')
    const info = await inspectRepo(sub, { env: repo.env })
    expect(info).toMatchObject({ isRepo: true, topLevel: sub, mainRoot: sub })
    const linked = join(tmpDir(), 'sub wt')
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'side', linked], { cwd: sub, env: repo.env })
    expect(await inspectRepo(linked, { env: repo.env })).toMatchObject({ topLevel: linked, mainRoot: sub })
  })

  test('outside a repository', async () => {
    const plain = tmpPlainDir()
    expect(await inspectRepo(plain.dir, { env: plain.env })).toEqual({ isRepo: false })
  })

  test('a repository without commits', async () => {
    const repo = tmpGitRepo({ commit: false })
    const info = await inspectRepo(repo.dir, { env: repo.env })
    expect(info).toMatchObject({ isRepo: true, hasCommits: false, head: null, branch: 'main' })
  })

  test('detached HEAD has no branch', async () => {
    const repo = tmpGitRepo()
    repo.git('switch', '-q', '--detach', 'HEAD')
    const info = await inspectRepo(repo.dir, { env: repo.env })
    expect(info).toMatchObject({ isRepo: true, branch: null, head: repo.git('rev-parse', 'HEAD') })
  })
})

describe('resolveCommit', () => {
  test('resolves branches, tags and abbreviations to the full commit', async () => {
    const repo = tmpGitRepo()
    const head = repo.git('rev-parse', 'HEAD')
    repo.git('tag', '-a', '-m', 'annotated', 'v1')
    const env = { env: repo.env }
    expect(await resolveCommit(repo.dir, 'HEAD', env)).toBe(head)
    expect(await resolveCommit(repo.dir, 'main', env)).toBe(head)
    expect(await resolveCommit(repo.dir, 'v1', env)).toBe(head)
    expect(await resolveCommit(repo.dir, head.slice(0, 8), env)).toBe(head)
  })

  test('an unknown ref is a usage error with a hint', async () => {
    const repo = tmpGitRepo()
    const error = await rejection(resolveCommit(repo.dir, 'no-such-branch', { env: repo.env }))
    expect(error.exitCode).toBe(ExitCode.Usage)
    expect(error.code).toBe('UNKNOWN_REF')
    expect(error.message).toContain('no-such-branch')
    expect(error.hint).toBeTruthy()
  })

  test('HEAD of an empty repository explains that there are no commits', async () => {
    const repo = tmpGitRepo({ commit: false })
    const error = await rejection(resolveCommit(repo.dir, 'HEAD', { env: repo.env }))
    expect(error.code).toBe('UNKNOWN_REF')
    expect(error.hint).toContain('no commits')
  })

  test.each(['-x', '--output=owned.txt', '--all', '', 'a\nb'])(
    'rejects %j before running git',
    async (ref) => {
      const repo = tmpGitRepo()
      const error = await rejection(resolveCommit(repo.dir, ref, { env: repo.env }))
      expect(error.exitCode).toBe(ExitCode.Usage)
      expect(error.code).toBe('INVALID_REF')
    },
  )

  test('outside a repository is an external tool error', async () => {
    const plain = tmpPlainDir()
    const error = await rejection(resolveCommit(plain.dir, 'HEAD', { env: plain.env }))
    expect(error.exitCode).toBe(ExitCode.ExternalTool)
  })
})

describe('branches', () => {
  test('branchExists', async () => {
    const repo = repoWithFeature(1)
    const env = { env: repo.env }
    expect(await branchExists(repo.dir, 'feature', env)).toBe(true)
    expect(await branchExists(repo.dir, 'nope', env)).toBe(false)
    // A tag of that name is not a branch.
    repo.git('tag', 'only-a-tag')
    expect(await branchExists(repo.dir, 'only-a-tag', env)).toBe(false)
    expect((await rejection(branchExists(repo.dir, '-feature', env))).code).toBe('INVALID_REF')
  })

  test('listBranches: "*" matches one level, a prefix everything below it', async () => {
    const repo = tmpGitRepo()
    repo.git('branch', 'harness/abc')
    repo.git('branch', 'harness/deep/er')
    repo.git('branch', 'harnessish')
    repo.git('branch', 'other')
    const head = repo.git('rev-parse', 'HEAD')
    expect(await listBranches(repo.dir, 'harness/*', { env: repo.env })).toEqual([
      { name: 'harness/abc', commit: head },
    ])
    expect(await listBranches(repo.dir, undefined, { env: repo.env })).toEqual([
      { name: 'harness/abc', commit: head },
    ])
    expect((await listBranches(repo.dir, 'harness', { env: repo.env })).map((b) => b.name)).toEqual([
      'harness/abc',
      'harness/deep/er',
    ])
  })

  test('deleteBranch keeps unmerged work unless forced', async () => {
    const repo = repoWithFeature(1)
    const env = { env: repo.env }
    const error = await rejection(deleteBranch(repo.dir, 'feature', env))
    expect(error.code).toBe('BRANCH_NOT_MERGED')
    expect(error.exitCode).toBe(ExitCode.IllegalState)
    expect(await branchExists(repo.dir, 'feature', env)).toBe(true)
    expect(await deleteBranch(repo.dir, 'feature', { ...env, force: true })).toBe(true)
    expect(await branchExists(repo.dir, 'feature', env)).toBe(false)
    expect(await deleteBranch(repo.dir, 'feature', { ...env, force: true })).toBe(false)
  })

  test('deleteBranch deletes a merged branch without force', async () => {
    const repo = tmpGitRepo()
    repo.git('branch', 'merged')
    expect(await deleteBranch(repo.dir, 'merged', { env: repo.env })).toBe(true)
  })

  test('deleteBranch with expectedTip is compare-and-delete', async () => {
    const repo = repoWithFeature(1)
    const env = { env: repo.env }
    const main = repo.git('rev-parse', 'main')
    const tip = repo.git('rev-parse', 'feature')
    repo.git('config', 'branch.feature.description', 'kept with the branch')
    const moved = await rejection(deleteBranch(repo.dir, 'feature', { ...env, expectedTip: main }))
    expect(moved.code).toBe('BRANCH_MOVED')
    expect(await branchExists(repo.dir, 'feature', env)).toBe(true)
    expect(await deleteBranch(repo.dir, 'feature', { ...env, expectedTip: tip })).toBe(true)
    expect(await branchExists(repo.dir, 'feature', env)).toBe(false)
    expect(repo.git('config', '--list')).not.toContain('branch.feature')
  })

  test('deleteBranch refuses a branch checked out in a worktree', async () => {
    const repo = tmpGitRepo()
    const env = { env: repo.env }
    repo.git('worktree', 'add', '-q', '-b', 'busy', join(tmpDir(), 'busy'))
    const error = await rejection(deleteBranch(repo.dir, 'busy', { ...env, force: true }))
    expect(error.code).toBe('BRANCH_CHECKED_OUT')
    expect(await branchExists(repo.dir, 'busy', env)).toBe(true)
  })

  test.each(['-D', '--force', 'a..b', 'HEAD', 'x.lock'])('deleteBranch rejects the name %j', async (name) => {
    const repo = tmpGitRepo()
    const error = await rejection(deleteBranch(repo.dir, name, { env: repo.env, force: true }))
    expect(error.exitCode).toBe(ExitCode.Usage)
  })
})

describe('unmergedCommits and isMergedInto', () => {
  test('no commits beyond the base', async () => {
    const repo = repoWithFeature(0)
    const env = { env: repo.env }
    expect(await unmergedCommits(repo.dir, 'feature', 'main', env)).toEqual({ count: 0, commits: [] })
    expect(await isMergedInto(repo.dir, 'feature', ['main'], env)).toBe(true)
  })

  test('unmerged commits are counted and listed newest first, against a branch or a commit', async () => {
    const repo = repoWithFeature(3)
    const env = { env: repo.env }
    const base = repo.git('rev-parse', 'main')
    const byName = await unmergedCommits(repo.dir, 'feature', 'main', env)
    expect(byName.count).toBe(3)
    expect(byName.commits.map((c) => c.subject)).toEqual([
      'feature commit 3',
      'feature commit 2',
      'feature commit 1',
    ])
    expect(byName.commits[0]?.sha).toBe(repo.git('rev-parse', 'feature'))
    expect(await unmergedCommits(repo.dir, 'feature', base, env)).toEqual(byName)
    const limited = await unmergedCommits(repo.dir, 'feature', base, { ...env, limit: 1 })
    expect(limited.count).toBe(3)
    expect(limited.commits).toHaveLength(1)
    expect(await isMergedInto(repo.dir, 'feature', ['main', base], env)).toBe(false)
  })

  test('merged by a merge commit or a fast-forward', async () => {
    const repo = repoWithFeature(2)
    const env = { env: repo.env }
    const base = repo.git('rev-parse', 'main')
    repo.write('main.txt', 'main moved on\n')
    repo.git('add', '-A')
    repo.git('commit', '-q', '-m', 'main work')
    repo.git('merge', '-q', '--no-ff', '-m', 'merge feature', 'feature')
    expect((await unmergedCommits(repo.dir, 'feature', 'main', env)).count).toBe(0)
    // Still unmerged against the commit it started from: callers pass the targets that matter.
    expect(await mergedInto(repo.dir, 'feature', [base, 'gone-branch', 'main'], env)).toBe('main')
    const ff = repoWithFeature(1)
    ff.git('merge', '-q', '--ff-only', 'feature')
    expect(await isMergedInto(ff.dir, 'feature', ['main'], { env: ff.env })).toBe(true)
  })

  test('a squash merge does not count as merged (keeping work errs safe)', async () => {
    const repo = repoWithFeature(2)
    repo.git('merge', '-q', '--squash', 'feature')
    repo.git('commit', '-q', '-m', 'squashed')
    expect(await isMergedInto(repo.dir, 'feature', ['main'], { env: repo.env })).toBe(false)
  })

  test('targets that do not exist are skipped; refs starting with "-" are rejected', async () => {
    const repo = repoWithFeature(1)
    const env = { env: repo.env }
    expect(await mergedInto(repo.dir, 'feature', ['nope'], env)).toBeNull()
    expect((await rejection(isMergedInto(repo.dir, 'feature', ['--all'], env))).code).toBe('INVALID_REF')
    expect((await rejection(unmergedCommits(repo.dir, '-feature', 'main', env))).code).toBe('INVALID_REF')
    expect((await rejection(unmergedCommits(repo.dir, 'feature', 'missing', env))).code).toBe('UNKNOWN_REF')
  })
})
