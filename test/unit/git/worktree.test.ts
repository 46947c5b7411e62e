import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ExitCode } from '../../../src/errors.js'
import { branchExists } from '../../../src/git/repo.js'
import {
  createWorktree,
  inspectWorktree,
  listWorktrees,
  parseWorktreeList,
  pruneWorktrees,
  recreateWorktree,
  removeWorktree,
} from '../../../src/git/worktree.js'
import { harnessRejection, rejection } from '../../helpers/errors.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../../helpers/tmp.js'

/** A worktree path with spaces, outside the repository. */
function wtPath(name = 'session one'): string {
  return join(tmpDir(), 'work trees', name)
}

function hook(repo: TmpRepo, name: string, script: string): void {
  const path = join(repo.dir, '.git', 'hooks', name)
  writeFileSync(path, `#!/bin/sh\n${script}\n`)
  chmodSync(path, 0o755)
}

/** Nothing of a failed creation may remain: no registration, no directory, no branch. */
async function expectNothingLeft(repo: TmpRepo, path: string, branch: string): Promise<void> {
  const worktrees = await listWorktrees(repo.dir, { env: repo.env })
  expect(worktrees.map((w) => w.path)).toEqual([repo.dir])
  expect(existsSync(path)).toBe(false)
  expect(await branchExists(repo.dir, branch, { env: repo.env })).toBe(false)
  const admin = join(repo.dir, '.git', 'worktrees')
  expect(existsSync(admin) ? readdirSync(admin) : []).toEqual([])
}

describe('createWorktree', () => {
  test('creates the branch at base and checks it out at a path with spaces', async () => {
    const repo = tmpGitRepo()
    const base = repo.git('rev-parse', 'HEAD')
    repo.write('later.txt', 'after base\n')
    repo.git('add', '-A')
    repo.git('commit', '-q', '-m', 'later')
    const path = wtPath()
    const created = await createWorktree({
      repoDir: repo.dir,
      path,
      branch: 'harness/abc',
      base,
      env: repo.env,
    })
    expect(created).toEqual({ path, branch: 'harness/abc', base })
    expect(readFileSync(join(path, 'README.md'), 'utf8')).toBe('# test repo\n')
    expect(existsSync(join(path, 'later.txt'))).toBe(false)
    expect(repo.git('rev-parse', 'harness/abc')).toBe(base)
    const listed = (await listWorktrees(repo.dir, { env: repo.env })).find((w) => w.path === path)
    expect(listed).toMatchObject({ branch: 'harness/abc', head: base, isMain: false, locked: false })
    // The branch has a reflog like one made by `git branch`.
    expect(repo.git('reflog', 'show', '--format=%gs', 'harness/abc')).toContain('Created from')
  })

  test('accepts a symbolic base and an existing empty directory', async () => {
    const repo = tmpGitRepo()
    const path = wtPath()
    mkdirSync(path, { recursive: true })
    const created = await createWorktree({
      repoDir: repo.dir,
      path,
      branch: 'b1',
      base: 'main',
      env: repo.env,
    })
    expect(created.base).toBe(repo.git('rev-parse', 'main'))
    expect(existsSync(join(path, 'README.md'))).toBe(true)
  })

  test('an existing branch is an error with a hint, never reused', async () => {
    const repo = tmpGitRepo()
    repo.git('branch', 'taken')
    const path = wtPath()
    const error = await harnessRejection(
      createWorktree({ repoDir: repo.dir, path, branch: 'taken', base: 'HEAD', env: repo.env }),
    )
    expect(error.code).toBe('BRANCH_EXISTS')
    expect(error.exitCode).toBe(ExitCode.IllegalState)
    expect(error.hint).toContain('taken')
    expect(existsSync(path)).toBe(false)
    expect(await branchExists(repo.dir, 'taken', { env: repo.env })).toBe(true)
  })

  test('a non-empty target directory is refused and left alone', async () => {
    const repo = tmpGitRepo()
    const path = wtPath()
    mkdirSync(path, { recursive: true })
    writeFileSync(join(path, 'precious.txt'), 'mine')
    const error = await harnessRejection(
      createWorktree({ repoDir: repo.dir, path, branch: 'b', base: 'HEAD', env: repo.env }),
    )
    expect(error.code).toBe('WORKTREE_PATH_EXISTS')
    expect(readFileSync(join(path, 'precious.txt'), 'utf8')).toBe('mine')
    expect(await branchExists(repo.dir, 'b', { env: repo.env })).toBe(false)
  })

  test.each([
    ['-b', 'HEAD', 'INVALID_REF'],
    ['--orphan', 'HEAD', 'INVALID_REF'],
    ['ok', '-HEAD', 'INVALID_REF'],
    ['ok', '--detach', 'INVALID_REF'],
    ['bad..name', 'HEAD', 'INVALID_BRANCH'],
    ['ok', 'missing-base', 'UNKNOWN_REF'],
  ])('branch %j base %j is a usage error and creates nothing', async (branch, base, code) => {
    const repo = tmpGitRepo()
    const path = wtPath()
    const error = await harnessRejection(
      createWorktree({ repoDir: repo.dir, path, branch, base, env: repo.env }),
    )
    expect(error.code).toBe(code)
    expect(error.exitCode).toBe(ExitCode.Usage)
    expect(existsSync(path)).toBe(false)
    expect(repo.git('branch', '--list')).toBe('* main')
  })

  test('an already aborted signal creates nothing', async () => {
    const repo = tmpGitRepo()
    const path = wtPath()
    const controller = new AbortController()
    controller.abort(new Error('stop'))
    const error = await rejection(
      createWorktree({
        repoDir: repo.dir,
        path,
        branch: 'x',
        base: 'HEAD',
        env: repo.env,
        signal: controller.signal,
      }),
    )
    expect((error as Error).message).toBe('stop')
    await expectNothingLeft(repo, path, 'x')
  })

  test('abort while git worktree add runs rolls back the worktree and the branch', async () => {
    const repo = tmpGitRepo()
    // The hook runs inside `git worktree add`, after the checkout: the worktree exists when we abort.
    const marker = join(tmpDir(), 'hook-ran')
    hook(repo, 'post-checkout', `touch "${marker}"\nsleep 1`)
    const path = wtPath()
    const controller = new AbortController()
    const pending = createWorktree({
      repoDir: repo.dir,
      path,
      branch: 'harness/aborted',
      base: 'HEAD',
      env: repo.env,
      signal: controller.signal,
    })
    while (!existsSync(marker)) await new Promise((r) => setTimeout(r, 20))
    expect(existsSync(join(path, 'README.md'))).toBe(true)
    controller.abort(new Error('interrupted'))
    const error = await rejection(pending)
    expect((error as Error).message).toBe('interrupted')
    await expectNothingLeft(repo, path, 'harness/aborted')
  })

  test('git failing midway (a failing hook) leaves nothing behind', async () => {
    const repo = tmpGitRepo()
    hook(repo, 'post-checkout', 'exit 1')
    const path = wtPath()
    const error = await harnessRejection(
      createWorktree({ repoDir: repo.dir, path, branch: 'harness/f', base: 'HEAD', env: repo.env }),
    )
    expect(error.exitCode).toBe(ExitCode.ExternalTool)
    await expectNothingLeft(repo, path, 'harness/f')
  })

  test('git killed by a signal midway leaves nothing behind, even its lock', async () => {
    const repo = tmpGitRepo()
    // Like Ctrl-C reaching git: the worktree is half set up (still locked "initializing").
    hook(repo, 'post-checkout', 'kill -TERM $PPID\nsleep 1')
    const path = wtPath()
    await rejection(
      createWorktree({ repoDir: repo.dir, path, branch: 'harness/k', base: 'HEAD', env: repo.env }),
    )
    await expectNothingLeft(repo, path, 'harness/k')
  })

  test('rollback keeps a branch that moved meanwhile: it holds work', async () => {
    const repo = tmpGitRepo()
    repo.write('extra.txt', 'x')
    repo.git('add', '-A')
    repo.git('commit', '-q', '-m', 'extra')
    const other = repo.git('rev-parse', 'HEAD')
    // The hook moves the new branch, then fails.
    hook(repo, 'post-checkout', `git update-ref refs/heads/harness/moved ${other}\nexit 1`)
    const path = wtPath()
    const error = await harnessRejection(
      createWorktree({ repoDir: repo.dir, path, branch: 'harness/moved', base: 'HEAD~1', env: repo.env }),
    )
    expect(error.code).toBe('WORKTREE_ROLLBACK_FAILED')
    expect(error.message).toContain('branch harness/moved')
    expect(repo.git('rev-parse', 'harness/moved')).toBe(other)
    expect(existsSync(path)).toBe(false)
  })
})

describe('listWorktrees', () => {
  test('parses the newline form of older git the same as the NUL form', () => {
    const fields = [
      'worktree /r',
      'HEAD abc',
      'branch refs/heads/main',
      '',
      'worktree /w x',
      'HEAD def',
      'detached',
      'locked',
    ]
    const nul = parseWorktreeList(`${fields.join('\0')}\0\0`)
    expect(parseWorktreeList(`${fields.join('\n')}\n\n`, '\n')).toEqual(nul)
    expect(nul).toEqual([
      expect.objectContaining({ path: '/r', head: 'abc', branch: 'main', isMain: true }),
      expect.objectContaining({
        path: '/w x',
        head: 'def',
        branch: null,
        detached: true,
        locked: true,
        isMain: false,
      }),
    ])
  })

  test('main first; locked, prunable and detached entries', async () => {
    const repo = tmpGitRepo()
    const locked = wtPath('locked one')
    const gone = wtPath('gone')
    const detached = wtPath('detached')
    repo.git('worktree', 'add', '-q', '-b', 'l', locked)
    repo.git('worktree', 'lock', '--reason', 'on a usb disk', locked)
    repo.git('worktree', 'add', '-q', '-b', 'g', gone)
    rmSync(gone, { recursive: true })
    repo.git('worktree', 'add', '-q', '--detach', detached)
    const list = await listWorktrees(repo.dir, { env: repo.env })
    const head = repo.git('rev-parse', 'HEAD')
    expect(list[0]).toMatchObject({ path: repo.dir, isMain: true, branch: 'main', head })
    expect(list.find((w) => w.path === locked)).toMatchObject({
      branch: 'l',
      locked: true,
      lockedReason: 'on a usb disk',
      prunable: false,
    })
    expect(list.find((w) => w.path === gone)).toMatchObject({ branch: 'g', prunable: true })
    expect(list.find((w) => w.path === detached)).toMatchObject({ branch: null, detached: true, head })
  })
})

describe('removeWorktree and pruneWorktrees', () => {
  async function withWorktree() {
    const repo = tmpGitRepo()
    const path = wtPath()
    await createWorktree({ repoDir: repo.dir, path, branch: 'harness/rm', base: 'HEAD', env: repo.env })
    return { repo, path, env: { env: repo.env } }
  }

  test('a clean worktree is removed; its branch stays', async () => {
    const { repo, path, env } = await withWorktree()
    expect(await removeWorktree(repo.dir, path, env)).toBe(true)
    expect(existsSync(path)).toBe(false)
    expect(await branchExists(repo.dir, 'harness/rm', env)).toBe(true)
    expect(await removeWorktree(repo.dir, path, env)).toBe(false)
  })

  test('a dirty worktree needs force', async () => {
    const { repo, path, env } = await withWorktree()
    writeFileSync(join(path, 'new file.txt'), 'work')
    const error = await harnessRejection(removeWorktree(repo.dir, path, env))
    expect(error.code).toBe('WORKTREE_DIRTY')
    expect(readFileSync(join(path, 'new file.txt'), 'utf8')).toBe('work')
    expect(await removeWorktree(repo.dir, path, { ...env, force: true })).toBe(true)
    expect(existsSync(path)).toBe(false)
  })

  test('a worktree whose directory is gone only loses its registration', async () => {
    const { repo, path, env } = await withWorktree()
    rmSync(path, { recursive: true })
    expect(await removeWorktree(repo.dir, path, env)).toBe(true)
    expect((await listWorktrees(repo.dir, env)).map((w) => w.path)).toEqual([repo.dir])
  })

  test('a locked worktree is refused', async () => {
    const { repo, path, env } = await withWorktree()
    repo.git('worktree', 'lock', path)
    const error = await harnessRejection(removeWorktree(repo.dir, path, { ...env, force: true }))
    expect(error.code).toBe('WORKTREE_LOCKED')
    expect(existsSync(path)).toBe(true)
  })

  test('a directory that is not a worktree, and the main worktree, are refused', async () => {
    const repo = tmpGitRepo()
    const stranger = tmpDir()
    writeFileSync(join(stranger, 'keep.txt'), 'keep')
    expect(
      (await harnessRejection(removeWorktree(repo.dir, stranger, { env: repo.env, force: true }))).code,
    ).toBe('NOT_A_WORKTREE')
    expect(existsSync(join(stranger, 'keep.txt'))).toBe(true)
    expect(
      (await harnessRejection(removeWorktree(repo.dir, repo.dir, { env: repo.env, force: true }))).code,
    ).toBe('MAIN_WORKTREE')
  })

  test('prune drops registrations of deleted directories', async () => {
    const { repo, path, env } = await withWorktree()
    rmSync(path, { recursive: true })
    const report = await pruneWorktrees(repo.dir, env)
    expect(report.join('\n')).toContain('Removing worktrees/')
    expect((await listWorktrees(repo.dir, env)).map((w) => w.path)).toEqual([repo.dir])
  })
})

describe('recreateWorktree', () => {
  test('checks the branch out again after its directory was deleted', async () => {
    const repo = tmpGitRepo()
    const env = { env: repo.env }
    const path = wtPath()
    await createWorktree({ repoDir: repo.dir, path, branch: 'harness/re', base: 'HEAD', env: repo.env })
    writeFileSync(join(path, 'work.txt'), 'committed work\n')
    execIn(repo, path, 'add', '-A')
    execIn(repo, path, 'commit', '-q', '-m', 'work')
    const tip = repo.git('rev-parse', 'harness/re')
    rmSync(path, { recursive: true })
    const again = await recreateWorktree({ repoDir: repo.dir, path, branch: 'harness/re', env: repo.env })
    expect(again.base).toBe(tip)
    expect(readFileSync(join(path, 'work.txt'), 'utf8')).toBe('committed work\n')
    expect((await listWorktrees(repo.dir, env)).find((w) => w.path === path)?.branch).toBe('harness/re')
  })

  test('a missing branch or one checked out elsewhere is refused', async () => {
    const repo = tmpGitRepo()
    const missing = await harnessRejection(
      recreateWorktree({ repoDir: repo.dir, path: wtPath(), branch: 'nope', env: repo.env }),
    )
    expect(missing.code).toBe('BRANCH_MISSING')
    const busy = await harnessRejection(
      recreateWorktree({ repoDir: repo.dir, path: wtPath(), branch: 'main', env: repo.env }),
    )
    expect(busy.code).toBe('BRANCH_CHECKED_OUT')
  })

  test('failure removes the new worktree but never the branch', async () => {
    const repo = tmpGitRepo()
    repo.git('branch', 'keep-me')
    hook(repo, 'post-checkout', 'exit 1')
    const path = wtPath()
    await rejection(recreateWorktree({ repoDir: repo.dir, path, branch: 'keep-me', env: repo.env }))
    expect(existsSync(path)).toBe(false)
    expect(await branchExists(repo.dir, 'keep-me', { env: repo.env })).toBe(true)
  })
})

/** What removing the folder would lose, through the removal engine's own check. */
async function worktreeChanges(dir: string, options: { env: NodeJS.ProcessEnv }): Promise<string[]> {
  return (await inspectWorktree(dir, options)).changes
}

async function isWorktreeDirty(dir: string, options: { env: NodeJS.ProcessEnv }): Promise<boolean> {
  return (await worktreeChanges(dir, options)).length > 0
}

describe('inspectWorktree', () => {
  function fresh() {
    const repo = tmpGitRepo()
    repo.write('.gitignore', 'ignored/\n*.log\n')
    repo.write('tracked.txt', 'one\n')
    repo.git('add', '-A')
    repo.git('commit', '-q', '-m', 'files')
    return repo
  }

  test('clean', async () => {
    const repo = fresh()
    expect(await isWorktreeDirty(repo.dir, { env: repo.env })).toBe(false)
  })

  test('ignored files only: clean', async () => {
    const repo = fresh()
    repo.write('ignored/deep/file.txt', 'x')
    repo.write('debug.log', 'x')
    expect(await isWorktreeDirty(repo.dir, { env: repo.env })).toBe(false)
  })

  test('an untracked file only, even deep in a new directory: dirty', async () => {
    const repo = fresh()
    repo.write('new dir/deeper/file name.txt', 'x')
    expect(await isWorktreeDirty(repo.dir, { env: repo.env })).toBe(true)
    expect(await worktreeChanges(repo.dir, { env: repo.env })).toEqual(['?? new dir/deeper/file name.txt'])
  })

  test('a tracked change only: dirty', async () => {
    const repo = fresh()
    repo.write('tracked.txt', 'two\n')
    expect(await isWorktreeDirty(repo.dir, { env: repo.env })).toBe(true)
  })

  test('a staged change only: dirty', async () => {
    const repo = fresh()
    repo.write('tracked.txt', 'two\n')
    repo.git('add', 'tracked.txt')
    expect(await isWorktreeDirty(repo.dir, { env: repo.env })).toBe(true)
    expect(await worktreeChanges(repo.dir, { env: repo.env })).toEqual(['M  tracked.txt'])
  })

  test('a deleted tracked file, and a staged rename: dirty', async () => {
    const repo = fresh()
    rmSync(join(repo.dir, 'tracked.txt'))
    expect(await isWorktreeDirty(repo.dir, { env: repo.env })).toBe(true)
    repo.git('checkout', '--', 'tracked.txt')
    repo.git('mv', 'tracked.txt', 'renamed.txt')
    expect(await worktreeChanges(repo.dir, { env: repo.env })).toEqual(['R  renamed.txt'])
  })

  test('in a linked worktree', async () => {
    const repo = fresh()
    const path = wtPath()
    await createWorktree({ repoDir: repo.dir, path, branch: 'harness/d', base: 'HEAD', env: repo.env })
    expect(await isWorktreeDirty(path, { env: repo.env })).toBe(false)
    writeFileSync(join(path, 'agent.txt'), 'x')
    expect(await isWorktreeDirty(path, { env: repo.env })).toBe(true)
    expect(await isWorktreeDirty(repo.dir, { env: repo.env })).toBe(false)
  })
})

function execIn(repo: TmpRepo, cwd: string, ...args: string[]): void {
  // The helper's git runs in the main checkout; this one runs in a linked worktree.
  execFileSync('git', args, { cwd, env: repo.env })
}
