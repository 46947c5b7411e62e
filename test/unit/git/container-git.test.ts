import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { prepareContainerGit } from '../../../src/git/container-git.js'
import { collectAgentCommits } from '../../../src/git/quarantine.js'
import { sessionWorktree, type TmpRepo, tmpDir, tmpGitRepo, tmpUserIn } from '../../helpers/tmp.js'

// The private clone of a container run (src/git/container-git.ts) is written as files: git must take it for
// what `git clone --bare --shared --single-branch` makes, with the worktree as its work tree, as the agent's
// git does inside the container (the worktree's `.git` there names the clone).
async function privateClone(repo: Pick<TmpRepo, 'env'>, worktree: string, id: string) {
  const folder = join(worktree, '..', '..', 'agents', id, 'container')
  const git = await prepareContainerGit({
    worktreeDir: worktree,
    branch: `harness/${id}`,
    folder,
    env: repo.env,
  })
  const inside = (...args: string[]) =>
    execFileSync('git', [`--git-dir=${git.gitDir}`, `--work-tree=${worktree}`, ...args], {
      cwd: worktree,
      env: repo.env,
      encoding: 'utf8',
    }).trim()
  return { git, inside }
}

describe('the private clone of a container run', () => {
  test('git takes it for a clone of the branch: its tip, the worktree clean, the objects whole; a commit made through it comes back', {
    tags: ['process'],
  }, async () => {
    const repo = tmpGitRepo()
    repo.write('a.txt', 'a\n')
    repo.git('add', 'a.txt')
    repo.git('commit', '-qm', 'a')
    const worktree = sessionWorktree(repo, 'c1')
    const { git, inside } = await privateClone(repo, worktree, 'c1')
    expect(git.startTip).toBe(repo.git('rev-parse', 'refs/heads/harness/c1'))
    expect(git.commonDir).toBe(join(repo.dir, '.git'))
    expect(inside('rev-parse', '--abbrev-ref', 'HEAD')).toBe('harness/c1')
    expect(inside('rev-parse', '--is-bare-repository')).toBe('false')
    expect(inside('status', '--porcelain')).toBe('')
    expect(inside('fsck', '--no-dangling')).toBe('')
    expect(inside('remote')).toBe('')
    expect(readFileSync(join(git.pointerFile), 'utf8')).toBe(`gitdir: ${git.gitDir}\n`)
    writeFileSync(join(worktree, 'b.txt'), 'b\n')
    inside('add', 'b.txt')
    inside('commit', '-qm', 'b inside')
    const tip = inside('rev-parse', 'HEAD')
    const collected = await collectAgentCommits({
      repoDir: repo.dir,
      worktreeDir: worktree,
      id: 'c1',
      agent: { gitDir: git.gitDir, branch: 'harness/c1', startTip: git.startTip },
      tempDir: join(repo.dir, '.harness', 'tmp'),
      env: repo.env,
    })
    expect(collected).toEqual({ kind: 'fast-forward', from: git.startTip, to: tip, commits: 1 })
    expect(repo.git('log', '-1', '--format=%s', 'harness/c1')).toBe('b inside')
  })

  test('of a sha256 repository: the clone is sha256 too', { tags: ['process'] }, async () => {
    const root = tmpDir()
    const user = tmpUserIn(root)
    const dir = join(root, 'repo')
    mkdirSync(dir)
    user.git(dir, 'init', '-q', '--object-format=sha256', '-b', 'main')
    user.git(dir, 'commit', '-q', '--allow-empty', '-m', 'first')
    const worktree = join(dir, '.harness', 'worktrees', 's1')
    user.git(dir, 'worktree', 'add', '-q', '-b', 'harness/s1', worktree)
    const { git, inside } = await privateClone(user, worktree, 's1')
    expect(git.startTip).toMatch(/^[0-9a-f]{64}$/)
    expect(inside('rev-parse', '--show-object-format')).toBe('sha256')
    expect(inside('rev-parse', 'HEAD')).toBe(git.startTip)
    expect(inside('status', '--porcelain')).toBe('')
  })
})
