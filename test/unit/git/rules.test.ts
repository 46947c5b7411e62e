import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ExternalToolError } from '../../../src/errors.js'
import { gitAt } from '../../../src/git/git.js'
import { DEFAULT_GIT_DEADLINE_MS, gitDeadlineMs, guardedArgs } from '../../../src/git/rules.js'
import { stageWorktree } from '../../../src/git/stage.js'
import { tmpDir, tmpGitRepo } from '../../helpers/tmp.js'

// The rules every git call is held to (src/git/rules.ts; docs/security.md, "What comes back from an agent is
// input"): what the one runner puts on each call, and what it refuses.
describe('the arguments git gets', () => {
  test('a command comparing a worktree gets --ignore-submodules=dirty, whatever it asked for (all is kept)', () => {
    expect(guardedArgs(['status', '--porcelain'])).toEqual([
      'status',
      '--ignore-submodules=dirty',
      '--porcelain',
    ])
    expect(guardedArgs(['-c', 'a=b', 'diff', '--ignore-submodules=none', 'x', '--'])).toEqual([
      '-c',
      'a=b',
      'diff',
      '--ignore-submodules=dirty',
      'x',
      '--',
    ])
    expect(guardedArgs(['diff-index', '--ignore-submodules=all', 'HEAD'])).toEqual([
      'diff-index',
      '--ignore-submodules=all',
      'HEAD',
    ])
    expect(guardedArgs(['rev-parse', 'HEAD'])).toEqual(['rev-parse', 'HEAD'])
  })

  test('for-each-repo: the command it runs in each repository is held to the same rules', () => {
    expect(
      guardedArgs(['for-each-repo', '--config=x', '--', 'status', '-z', '--ignore-submodules=none']),
    ).toEqual(['for-each-repo', '--config=x', '--', 'status', '--ignore-submodules=dirty', '-z'])
  })

  test('git add outside stageWorktree is refused before git starts', () => {
    expect(() => guardedArgs(['add', '-A'])).toThrow(/git add runs only through stageWorktree/)
    expect(() => guardedArgs(['worktree', 'add', '--', '/p', 'b'])).not.toThrow()
  })

  test('the deadline: HARNESS_GIT_TIMEOUT, else ten minutes; never zero', () => {
    expect(gitDeadlineMs({})).toBe(DEFAULT_GIT_DEADLINE_MS)
    expect(gitDeadlineMs({ HARNESS_GIT_TIMEOUT: '90s' })).toBe(90_000)
    expect(() => gitDeadlineMs({ HARNESS_GIT_TIMEOUT: '0' })).toThrow(/longer than 0/)
    expect(() => gitDeadlineMs({ HARNESS_GIT_TIMEOUT: 'soon' })).toThrow(/HARNESS_GIT_TIMEOUT/)
  })
})

describe('the runner', () => {
  test('a git that never ends is stopped at its deadline: GIT_TIMEOUT, exit 5, naming the command', {
    tags: ['process'],
  }, async () => {
    const repo = tmpGitRepo()
    // A FIFO where git expects a file: git blocks opening it, for ever.
    const fifo = join(repo.dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    const git = gitAt(repo.dir, { env: { ...repo.env, HARNESS_GIT_TIMEOUT: '1s' } })
    const error = await git.run(['hash-object', fifo]).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ExternalToolError)
    expect((error as ExternalToolError).code).toBe('GIT_TIMEOUT')
    expect((error as Error).message).toBe('git hash-object did not finish within 1 s and was stopped')
  })

  test('an abort signal given with the options stops a git that is running', {
    tags: ['process'],
  }, async () => {
    const repo = tmpGitRepo()
    const fifo = join(repo.dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    const controller = new AbortController()
    const pending = gitAt(repo.dir, { env: repo.env, signal: controller.signal }).run(['hash-object', fifo])
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
  })
})

describe('stageWorktree', () => {
  test("a checked-out nested repository's own clean filter and fsmonitor never run; its commit is staged", async () => {
    const repo = tmpGitRepo()
    const pwned = join(tmpDir(), 'pwned')
    const nested = join(repo.dir, 'sub')
    mkdirSync(nested)
    const git = (cwd: string, ...args: string[]) =>
      gitAt(cwd, { env: repo.env }).run(['-c', 'filter.evil.clean=cat', ...args])
    await gitAt(nested, { env: repo.env }).run(['init', '-q'])
    writeFileSync(join(nested, '.gitattributes'), '* filter=evil\n')
    writeFileSync(join(nested, 'a.txt'), 'one\n')
    await gitAt(nested, { env: repo.env }).run([
      'config',
      'filter.evil.clean',
      `sh -c 'echo clean >> ${pwned}; cat'`,
    ])
    await gitAt(nested, { env: repo.env }).run([
      'config',
      'core.fsmonitor',
      `sh -c 'echo fsmonitor >> ${pwned}'`,
    ])
    await git(nested, 'update-index', '--add', 'a.txt', '.gitattributes')
    await git(nested, 'commit', '-q', '-m', 'nested')
    // The outer repository records it as a gitlink (update-index: git add would already look inside).
    await gitAt(repo.dir, { env: repo.env }).run(['update-index', '--add', 'sub'])
    const nestedHead = await gitAt(nested, { env: repo.env }).text(['rev-parse', 'HEAD'])
    writeFileSync(join(nested, 'a.txt'), 'one\n') // a new mtime: a status inside would run the filter
    writeFileSync(join(repo.dir, 'new.txt'), 'new\n')
    const index = join(repo.dir, '.git', 'index')
    // Plain `git add -A` here would run the filter (the e2e tests show it on main); stageWorktree never does.
    const staged = await stageWorktree(gitAt(repo.dir, { env: repo.env }), index, 20)
    expect(staged.exitCode).toBe(0)
    const entries = await gitAt(repo.dir, { env: repo.env }).lines(['ls-files', '--stage'])
    expect(entries).toContain(`160000 ${nestedHead} 0\tsub`)
    expect(entries.some((line) => line.endsWith('\tnew.txt'))).toBe(true)
    expect(existsSync(pwned)).toBe(false)
  })
})
