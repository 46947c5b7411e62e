import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ExitCode } from '../../../src/errors.js'
import { resolveCommit } from '../../../src/git/common.js'
import { branchExists, deleteBranch, inspectRepo } from '../../../src/git/repo.js'
import { harnessRejection } from '../../helpers/errors.js'
import { tmpDir, tmpGitRepo, tmpPlainDir } from '../../helpers/tmp.js'

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

  test('a name a branch has is that branch, even when a tag of that name exists (git would take the tag)', async () => {
    const repo = tmpGitRepo()
    const first = repo.git('rev-parse', 'HEAD')
    repo.git('branch', 'develop')
    repo.git('commit', '-q', '--allow-empty', '-m', 'later')
    repo.git('tag', 'develop')
    const env = { env: repo.env }
    expect(await resolveCommit(repo.dir, 'develop', env)).toBe(first)
    expect(await resolveCommit(repo.dir, 'develop~0', env)).toBe(first)
    expect(await resolveCommit(repo.dir, 'refs/tags/develop', env)).toBe(repo.git('rev-parse', 'HEAD'))
  })

  test('an unknown ref is a usage error with a hint', async () => {
    const repo = tmpGitRepo()
    const error = await harnessRejection(resolveCommit(repo.dir, 'no-such-branch', { env: repo.env }))
    expect(error.exitCode).toBe(ExitCode.Usage)
    expect(error.code).toBe('UNKNOWN_REF')
    expect(error.message).toContain('no-such-branch')
    expect(error.hint).toBeTruthy()
  })

  test('HEAD of an empty repository explains that there are no commits', async () => {
    const repo = tmpGitRepo({ commit: false })
    const error = await harnessRejection(resolveCommit(repo.dir, 'HEAD', { env: repo.env }))
    expect(error.code).toBe('UNKNOWN_REF')
    expect(error.hint).toContain('no commits')
  })

  test.each(['-x', '--output=owned.txt', '--all', '', 'a\nb'])(
    'rejects %j before running git',
    async (ref) => {
      const repo = tmpGitRepo()
      const error = await harnessRejection(resolveCommit(repo.dir, ref, { env: repo.env }))
      expect(error.exitCode).toBe(ExitCode.Usage)
      expect(error.code).toBe('INVALID_REF')
    },
  )

  test('outside a repository is an external tool error', async () => {
    const plain = tmpPlainDir()
    const error = await harnessRejection(resolveCommit(plain.dir, 'HEAD', { env: plain.env }))
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
    expect((await harnessRejection(branchExists(repo.dir, '-feature', env))).code).toBe('INVALID_REF')
  })

  test('deleteBranch with expectedTip is compare-and-delete', async () => {
    const repo = repoWithFeature(1)
    const env = { env: repo.env }
    const main = repo.git('rev-parse', 'main')
    const tip = repo.git('rev-parse', 'feature')
    repo.git('config', 'branch.feature.description', 'kept with the branch')
    const moved = await harnessRejection(
      deleteBranch(repo.dir, 'feature', main, { ...env, dropConfig: true }),
    )
    expect(moved.code).toBe('BRANCH_MOVED')
    expect(await branchExists(repo.dir, 'feature', env)).toBe(true)
    expect(await deleteBranch(repo.dir, 'feature', tip, { ...env, dropConfig: true })).toBe(true)
    expect(await branchExists(repo.dir, 'feature', env)).toBe(false)
    expect(repo.git('config', '--list')).not.toContain('branch.feature')
  })

  test.each(['-D', '--force'])('deleteBranch rejects the name %j', async (name) => {
    const repo = tmpGitRepo()
    const head = repo.git('rev-parse', 'HEAD')
    const error = await harnessRejection(deleteBranch(repo.dir, name, head, { env: repo.env }))
    expect(error.exitCode).toBe(ExitCode.Usage)
  })
})
