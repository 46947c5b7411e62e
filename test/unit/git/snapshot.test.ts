import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { HarnessError } from '../../../src/errors.js'
import { deleteBranch } from '../../../src/git/repo.js'
import {
  restoreSnapshot,
  snapshotRef,
  snapshotWorktree,
  writeWorktreeTree,
} from '../../../src/git/snapshot.js'
import { createWorktree } from '../../../src/git/worktree.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../../helpers/tmp.js'

async function harnessRejection(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof HarnessError)) throw new Error(`expected a HarnessError, got ${String(error)}`)
  return error
}

function fileHash(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

/** Everything a snapshot must not disturb. */
function userState(repo: TmpRepo, dir = repo.dir) {
  const run = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: repo.env, encoding: 'utf8' })
  const indexPath = run('rev-parse', '--path-format=absolute', '--git-path', 'index').trim()
  return {
    index: fileHash(indexPath),
    head: run('rev-parse', 'HEAD').trim(),
    branch: run('symbolic-ref', 'HEAD').trim(),
    staged: run('diff', '--cached', '--name-status'),
  }
}

/** A repo with every kind of change a snapshot has to capture (and one it must skip). */
function busyRepo(): TmpRepo {
  const repo = tmpGitRepo()
  repo.write('.gitignore', 'ignored/\n*.log\n')
  repo.write('tracked.txt', 'v1\n')
  repo.write('to delete.txt', 'bye\n')
  repo.write('staged.txt', 'v1\n')
  repo.git('add', '-A')
  repo.git('commit', '-q', '-m', 'files')
  repo.write('tracked.txt', 'v2 unstaged\n')
  repo.write('staged.txt', 'v2 staged\n')
  repo.git('add', 'staged.txt')
  repo.write('staged.txt', 'v3 staged then edited\n')
  rmSync(join(repo.dir, 'to delete.txt'))
  repo.write('new dir/untracked file.txt', 'brand new\n')
  repo.write('ignored/secret.txt', 'never snapshot\n')
  repo.write('debug.log', 'noise\n')
  return repo
}

function show(repo: TmpRepo, rev: string): string {
  return execFileSync('git', ['show', rev], { cwd: repo.dir, env: repo.env, encoding: 'utf8' })
}

function treeFiles(repo: TmpRepo, rev: string): string[] {
  return repo.git('ls-tree', '-r', '--name-only', rev).split('\n').filter(Boolean)
}

describe('snapshotWorktree', () => {
  test('captures uncommitted and untracked contents exactly; index, HEAD, branch and status untouched', async () => {
    const repo = busyRepo()
    const status = repo.git('status', '--porcelain=v1', '--untracked-files=all')
    const before = userState(repo)
    const snap = await snapshotWorktree({
      worktreeDir: repo.dir,
      ref: 'refs/harness/s1/checkpoints/1',
      message: 'checkpoint 1\n\ndetails',
      env: repo.env,
    })
    expect(userState(repo)).toEqual(before)
    expect(repo.git('status', '--porcelain=v1', '--untracked-files=all')).toBe(status)
    expect(repo.git('rev-parse', 'refs/harness/s1/checkpoints/1')).toBe(snap.commit)
    expect(repo.git('rev-parse', `${snap.commit}^`)).toBe(before.head)
    expect(repo.git('log', '-1', '--format=%B', snap.commit)).toBe('checkpoint 1\n\ndetails')
    expect(treeFiles(repo, snap.commit)).toEqual([
      '.gitignore',
      'README.md',
      'new dir/untracked file.txt',
      'staged.txt',
      'tracked.txt',
    ])
    expect(show(repo, `${snap.commit}:tracked.txt`)).toBe('v2 unstaged\n')
    expect(show(repo, `${snap.commit}:staged.txt`)).toBe('v3 staged then edited\n')
    expect(show(repo, `${snap.commit}:new dir/untracked file.txt`)).toBe('brand new\n')
  })

  test('in a linked worktree, with the worktree own index', async () => {
    const repo = tmpGitRepo()
    const path = join(tmpDir(), 'wt with spaces')
    await createWorktree({ repoDir: repo.dir, path, branch: 'harness/w', base: 'HEAD', env: repo.env })
    writeFileSync(join(path, 'agent.txt'), 'agent output\n')
    const before = userState(repo, path)
    const mainBefore = userState(repo)
    const snap = await snapshotWorktree({
      worktreeDir: path,
      ref: 'refs/harness/w/checkpoints/1',
      message: 'cp',
      env: repo.env,
    })
    expect(userState(repo, path)).toEqual(before)
    expect(userState(repo)).toEqual(mainBefore)
    expect(show(repo, `${snap.commit}:agent.txt`)).toBe('agent output\n')
    expect(repo.git('rev-parse', `${snap.commit}^`)).toBe(repo.git('rev-parse', 'harness/w'))
  })

  test('an existing ref is never overwritten unless asked', async () => {
    const repo = busyRepo()
    const options = { worktreeDir: repo.dir, ref: 'refs/harness/x/snap', message: 'one', env: repo.env }
    const first = await snapshotWorktree(options)
    repo.write('tracked.txt', 'v3\n')
    const error = await harnessRejection(snapshotWorktree({ ...options, message: 'two' }))
    expect(error.code).toBe('REF_EXISTS')
    expect(repo.git('rev-parse', 'refs/harness/x/snap')).toBe(first.commit)
    const second = await snapshotWorktree({ ...options, message: 'two', overwrite: true })
    expect(repo.git('rev-parse', 'refs/harness/x/snap')).toBe(second.commit)
    expect(second.commit).not.toBe(first.commit)
  })

  test('explicit parent, and a repository without commits', async () => {
    const repo = tmpGitRepo({ commit: false })
    repo.write('first.txt', 'no commits yet\n')
    const root = await snapshotWorktree({
      worktreeDir: repo.dir,
      ref: 'refs/harness/e/1',
      message: 'm',
      env: repo.env,
    })
    expect(repo.git('rev-list', '--parents', '-n', '1', root.commit)).toBe(root.commit)
    expect(show(repo, `${root.commit}:first.txt`)).toBe('no commits yet\n')
    const child = await snapshotWorktree({
      worktreeDir: repo.dir,
      ref: 'refs/harness/e/2',
      message: 'm',
      parent: root.commit,
      env: repo.env,
    })
    expect(repo.git('rev-parse', `${child.commit}^`)).toBe(root.commit)
    expect(child.tree).toBe(root.tree)
  })

  test('works without a configured identity', async () => {
    const repo = busyRepo()
    const env = { ...repo.env }
    for (const key of [
      'GIT_AUTHOR_NAME',
      'GIT_AUTHOR_EMAIL',
      'GIT_COMMITTER_NAME',
      'GIT_COMMITTER_EMAIL',
      'EMAIL',
    ]) {
      delete env[key]
    }
    const snap = await snapshotWorktree({ worktreeDir: repo.dir, ref: 'refs/harness/i/1', message: 'm', env })
    expect(repo.git('cat-file', '-t', snap.commit)).toBe('commit')
  })

  test.each(['harness/x', '-x', 'refs/harness/bad..ref', 'refs/harness/a b', '--delete'])(
    'the ref %j is rejected',
    async (ref) => {
      const repo = busyRepo()
      const error = await harnessRejection(
        snapshotWorktree({ worktreeDir: repo.dir, ref, message: 'm', env: repo.env }),
      )
      expect(error.code).toBe('INVALID_REF')
    },
  )
})

describe('snapshotRef', () => {
  test('keeps a branch tip after the branch is deleted', async () => {
    const repo = tmpGitRepo()
    repo.git('switch', '-q', '-c', 'harness/gone')
    repo.write('work.txt', 'committed\n')
    repo.git('add', '-A')
    repo.git('commit', '-q', '-m', 'work')
    const tip = repo.git('rev-parse', 'HEAD')
    repo.git('switch', '-q', 'main')
    const kept = await snapshotRef(repo.dir, 'refs/harness/gone/branch', 'harness/gone', { env: repo.env })
    expect(kept).toMatchObject({ commit: tip, ref: 'refs/harness/gone/branch' })
    await deleteBranch(repo.dir, 'harness/gone', tip, { env: repo.env })
    expect(show(repo, 'refs/harness/gone/branch:work.txt')).toBe('committed\n')
    const again = await harnessRejection(
      snapshotRef(repo.dir, 'refs/harness/gone/branch', 'main', { env: repo.env }),
    )
    expect(again.code).toBe('REF_EXISTS')
    expect(
      (await harnessRejection(snapshotRef(repo.dir, 'refs/harness/a', '-main', { env: repo.env }))).code,
    ).toBe('INVALID_REF')
  })
})

describe('restoreSnapshot', () => {
  test('brings back exact contents, modes and links without moving the branch or the index', async () => {
    const repo = busyRepo()
    repo.write('tools/run.sh', '#!/bin/sh\necho hi\n')
    chmodSync(join(repo.dir, 'tools/run.sh'), 0o755)
    symlinkSync('tracked.txt', join(repo.dir, 'link to tracked'))
    const snap = await snapshotWorktree({
      worktreeDir: repo.dir,
      ref: 'refs/harness/r/1',
      message: 'm',
      env: repo.env,
    })

    // Everything changes afterwards, including a commit on the branch.
    repo.write('committed later.txt', 'later\n')
    repo.git('add', 'committed later.txt')
    repo.git('commit', '-q', '-m', 'later')
    repo.write('tracked.txt', 'scribbled\n')
    repo.write('staged.txt', 'scribbled too\n')
    unlinkSync(join(repo.dir, 'new dir/untracked file.txt'))
    chmodSync(join(repo.dir, 'tools/run.sh'), 0o644)
    unlinkSync(join(repo.dir, 'link to tracked'))
    writeFileSync(join(repo.dir, 'link to tracked'), 'now a file\n')
    repo.write('stray/untracked extra.txt', 'extra\n')
    repo.write('ignored/cache.bin', 'ignored stays\n')
    const before = userState(repo)

    const result = await restoreSnapshot(repo.dir, snap.commit, { env: repo.env })

    expect(userState(repo)).toEqual(before)
    expect(result.removed).toEqual(['committed later.txt', 'stray/untracked extra.txt'])
    expect((await writeWorktreeTree(repo.dir, { env: repo.env })).tree).toBe(snap.tree)
    expect(readFileSync(join(repo.dir, 'tracked.txt'), 'utf8')).toBe('v2 unstaged\n')
    expect(readFileSync(join(repo.dir, 'staged.txt'), 'utf8')).toBe('v3 staged then edited\n')
    expect(readFileSync(join(repo.dir, 'new dir/untracked file.txt'), 'utf8')).toBe('brand new\n')
    expect(lstatSync(join(repo.dir, 'tools/run.sh')).mode & 0o111).not.toBe(0)
    expect(readlinkSync(join(repo.dir, 'link to tracked'))).toBe('tracked.txt')
    expect(existsSync(join(repo.dir, 'to delete.txt'))).toBe(false)
    expect(existsSync(join(repo.dir, 'stray'))).toBe(false)
    // Ignored files are not work the snapshot knows about: they stay.
    expect(readFileSync(join(repo.dir, 'ignored/secret.txt'), 'utf8')).toBe('never snapshot\n')
    expect(readFileSync(join(repo.dir, 'ignored/cache.bin'), 'utf8')).toBe('ignored stays\n')
  })

  test('in a linked worktree from a subdirectory', async () => {
    const repo = tmpGitRepo()
    const path = join(tmpDir(), 'linked wt')
    await createWorktree({ repoDir: repo.dir, path, branch: 'harness/r2', base: 'HEAD', env: repo.env })
    writeFileSync(join(path, 'a.txt'), 'A\n')
    const snap = await snapshotWorktree({
      worktreeDir: path,
      ref: 'refs/harness/r2/1',
      message: 'm',
      env: repo.env,
    })
    writeFileSync(join(path, 'a.txt'), 'changed\n')
    writeFileSync(join(path, 'README.md'), 'changed\n')
    const result = await restoreSnapshot(path, 'refs/harness/r2/1', { env: repo.env })
    expect(result.removed).toEqual([])
    expect(readFileSync(join(path, 'a.txt'), 'utf8')).toBe('A\n')
    expect(readFileSync(join(path, 'README.md'), 'utf8')).toBe('# test repo\n')
    expect((await writeWorktreeTree(path, { env: repo.env })).tree).toBe(snap.tree)
    // The main checkout is not touched.
    expect(existsSync(join(repo.dir, 'a.txt'))).toBe(false)
  })

  test('rejects refs that start with "-" and unknown snapshots', async () => {
    const repo = tmpGitRepo()
    expect((await harnessRejection(restoreSnapshot(repo.dir, '--all', { env: repo.env }))).code).toBe(
      'INVALID_REF',
    )
    expect(
      (await harnessRejection(restoreSnapshot(repo.dir, 'refs/harness/none', { env: repo.env }))).code,
    ).toBe('UNKNOWN_REF')
  })
})
