import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { agentBranchTip, collectAgentCommits } from '../../../src/git/quarantine.js'
import { sessionWorktree, tmpDir, tmpGitRepo } from '../../helpers/tmp.js'

// Commits come back from a git directory an agent could write only through the quarantine
// (src/git/quarantine.ts; docs/security.md, "git").
function setup() {
  const repo = tmpGitRepo()
  const worktree = sessionWorktree(repo, 'q1')
  const startTip = repo.git('rev-parse', 'refs/heads/harness/q1')
  const clone = join(tmpDir(), 'clone.git')
  repo.git('clone', '-q', '--bare', '--shared', '--single-branch', '--branch=harness/q1', repo.dir, clone)
  // The agent's commit, made in its clone as git inside a container makes it.
  const inClone = (...args: string[]) =>
    execFileSync('git', [`--git-dir=${clone}`, ...args], { env: repo.env, encoding: 'utf8' }).trim()
  const commit = (message: string, parent: string | null = startTip) => {
    const tree = inClone('rev-parse', `${startTip}^{tree}`)
    return inClone('commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message)
  }
  const pwned = join(tmpDir(), 'pwned')
  const tempDir = join(repo.dir, '.harness', 'tmp')
  const collect = () =>
    collectAgentCommits({
      repoDir: repo.dir,
      worktreeDir: worktree,
      id: 'q1',
      agent: { gitDir: clone, branch: 'harness/q1', startTip },
      tempDir,
      env: repo.env,
    })
  return { repo, clone, inClone, commit, startTip, pwned, collect, tempDir }
}

describe("reading the agent's branch", () => {
  test('a loose ref, else packed-refs; a missing branch is null', () => {
    const { clone, inClone, commit, startTip } = setup()
    // A fresh clone's branch is packed.
    expect(agentBranchTip(clone, 'harness/q1')).toBe(startTip)
    const tip = commit('agent work')
    inClone('update-ref', 'refs/heads/harness/q1', tip)
    expect(agentBranchTip(clone, 'harness/q1')).toBe(tip)
    expect(agentBranchTip(clone, 'harness/none')).toBeNull()
  })

  test('a FIFO, a link on the way, or anything but a commit id: refused at once, never waited on', {
    tags: ['process'],
  }, () => {
    const { clone } = setup()
    const ref = join(clone, 'refs', 'heads', 'harness', 'q1')
    mkdirSync(join(ref, '..'), { recursive: true })
    execFileSync('mkfifo', [ref])
    expect(() => agentBranchTip(clone, 'harness/q1')).toThrow(/is a FIFO/)
    rmSync(ref)
    writeFileSync(ref, 'ref: refs/heads/main\n')
    expect(() => agentBranchTip(clone, 'harness/q1')).toThrow(/is not a commit id/)
    rmSync(join(clone, 'refs', 'heads'), { recursive: true })
    const elsewhere = tmpDir()
    symlinkSync(elsewhere, join(clone, 'refs', 'heads'))
    expect(() => agentBranchTip(clone, 'harness/q1')).toThrow(/not a real folder/)
  })
})

describe('collecting through the quarantine', () => {
  test("the agent's commits land by fast-forward; its clone's config is never read (a promisor remote's sshCommand)", {
    tags: ['process'],
  }, async () => {
    const { repo, clone, inClone, commit, startTip, pwned, collect, tempDir } = setup()
    const tip = commit('agent work')
    inClone('update-ref', 'refs/heads/harness/q1', tip)
    writeFileSync(
      join(clone, 'config'),
      `[core]\n\trepositoryformatversion = 1\n\tsshCommand = "sh -c 'echo ssh >> ${pwned}'"\n[extensions]\n\tpartialClone = origin\n[remote "origin"]\n\turl = ssh://example.invalid/x\n\tpromisor = true\n`,
    )
    expect(await collect()).toEqual({ kind: 'fast-forward', from: startTip, to: tip, commits: 1 })
    expect(repo.git('rev-parse', 'refs/heads/harness/q1')).toBe(tip)
    expect(repo.git('for-each-ref', 'refs/harness/')).toBe('')
    expect(existsSync(pwned)).toBe(false)
    // The quarantine is gone with its folder.
    expect(execFileSync('ls', ['-A', tempDir], { encoding: 'utf8' })).toBe('')
    // Collected again (a resume after a failure that was in fact done): nothing new.
    expect(await collect()).toMatchObject({ kind: 'fast-forward', to: tip })
  })

  test('a rewritten history is kept under refs/harness/<id>/container and the branch is not moved', async () => {
    const { repo, inClone, commit, startTip, collect } = setup()
    const orphan = commit('rewritten', null)
    inClone('update-ref', 'refs/heads/harness/q1', orphan)
    expect(await collect()).toEqual({ kind: 'diverged', ref: 'refs/harness/q1/container', tip: orphan })
    expect(repo.git('rev-parse', 'refs/heads/harness/q1')).toBe(startTip)
  })

  test('a branch naming an object the agent does not have, or not a commit: failed, nothing moved', async () => {
    const { repo, clone, inClone, startTip, collect } = setup()
    mkdirSync(join(clone, 'refs', 'heads', 'harness'), { recursive: true })
    writeFileSync(join(clone, 'refs', 'heads', 'harness', 'q1'), `${'1'.repeat(40)}\n`)
    expect(await collect()).toMatchObject({
      kind: 'failed',
      reason: expect.stringContaining('not a commit it made'),
    })
    const blob = inClone('hash-object', '-w', '--stdin')
    writeFileSync(join(clone, 'refs', 'heads', 'harness', 'q1'), `${blob}\n`)
    expect(await collect()).toMatchObject({ kind: 'failed' })
    expect(repo.git('rev-parse', 'refs/heads/harness/q1')).toBe(startTip)
  })
})

describe('landing on the branch', () => {
  test('every commit of the agent is counted; a branch moved meanwhile is left as it is, the commits kept under refs/harness/<id>/container', async () => {
    const { repo, inClone, commit, startTip, collect } = setup()
    const second = commit('second', commit('first'))
    inClone('update-ref', 'refs/heads/harness/q1', second)
    repo.git(
      'update-ref',
      'refs/heads/harness/q1',
      repo.git('commit-tree', `${startTip}^{tree}`, '-p', startTip, '-m', 'the user'),
    )
    const moved = repo.git('rev-parse', 'refs/heads/harness/q1')
    expect(await collect()).toMatchObject({
      kind: 'failed',
      reason: expect.stringContaining('moved meanwhile'),
    })
    expect(repo.git('rev-parse', 'refs/heads/harness/q1')).toBe(moved)
    expect(repo.git('rev-parse', 'refs/harness/q1/container')).toBe(second)
    // Put back where the run started: both commits come back, counted.
    repo.git('update-ref', 'refs/heads/harness/q1', startTip)
    expect(await collect()).toEqual({ kind: 'fast-forward', from: startTip, to: second, commits: 2 })
    expect(repo.git('for-each-ref', 'refs/harness/')).toBe('')
  })
})
