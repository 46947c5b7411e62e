import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { isAlive } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { nestedRepoWithFilter } from '../helpers/hostile.js'
import { readRecord } from '../helpers/sessions.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

/**
 * What comes back from an agent is input (SPEC §10; docs/security.md, "What comes back from an agent is
 * input"): what an agent left in its worktree — a nested repository with its own config, a FIFO where git reads
 * a ref, a tracked folder turned into a link — never runs a command of its choosing on the host, never hangs
 * harness for good, never makes harness delete outside the worktree. And a name the user gives is a branch
 * before it is a tag. Container forms of these attacks are in test/e2e/container-boundary.test.ts.
 */

interface Record {
  id: string
  status: string
  exit_code: number | null
  worktree_dir: string
  git_branch: string
  base_commit: string
  base_ref: string
  runs: { pid: number | null; supervisor_pid: number | null }[]
}

describe('a nested repository an agent committed never runs its config on the host', () => {
  test('run end, checkpoint, diff, merge and cleanup: no clean filter, no fsmonitor of its own runs', async () => {
    const repo = tmpGitRepo()
    const pwned = join(tmpDir(), 'pwned')
    const session = await finishedSession(repo, `${nestedRepoWithFilter(pwned)}\necho loose > loose.txt`)
    const id = session.id as string
    expect(existsSync(pwned)).toBe(false)
    const record = readRecord<Record & { files_modified?: string[] }>(repo.dir, id)
    expect(record.files_modified).toEqual(['loose.txt', 'vendor/lib'])
    for (const args of [
      ['session', 'checkpoint', id, '-m', 'after'],
      ['session', 'diff', id, '--stat'],
      ['session', 'merge', id, '--dry-run'],
      ['session', 'merge', id],
      ['session', 'cleanup', '--older-than', '0'],
    ]) {
      const result = await cli(args, { cwd: repo.dir, env: repo.env })
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(0)
      expect(existsSync(pwned), args.join(' ')).toBe(false)
    }
    // The nested repository landed as a gitlink, and cleanup kept the session for it (NESTED_REPO).
    expect(repo.git('ls-tree', 'main', 'vendor/lib')).toMatch(/^160000 commit /)
    expect(existsSync(record.worktree_dir)).toBe(true)
  })
})

describe('a FIFO where git reads a ref never holds harness for good', () => {
  test('a run hung at its end in git over a nested FIFO HEAD: kill ends it (exit 4: the agent ended by itself), the supervisor is gone', async () => {
    const repo = tmpGitRepo()
    const script = [
      'git init -q nested',
      'git -C nested -c core.fsmonitor=false commit -q --allow-empty -m x',
      'rm nested/.git/HEAD',
      'mkfifo nested/.git/HEAD',
      'echo done > done.txt',
    ].join('\n')
    const run = await cli(['run', '--detach', '--json', '-a', 'exec', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id, worktree_dir } = json<Record>(run)
    await waitFor('the agent to finish', () => {
      const record = readRecord<Record>(repo.dir, id)
      const pid = record.runs.at(-1)?.pid
      return existsSync(join(worktree_dir, 'done.txt')) && !!pid && !isAlive(pid)
    })
    const record = readRecord<Record>(repo.dir, id)
    const supervisor = record.runs.at(-1)?.supervisor_pid as number
    // The supervisor is stuck in git reading the FIFO (the run's end): the record still says RUNNING.
    expect(record.status).toBe('RUNNING')
    expect(isAlive(supervisor)).toBe(true)
    const kill = await cli(['session', 'kill', id, '--grace', '1s'], { cwd: repo.dir, env: repo.env })
    expect(kill.exitCode).toBe(4)
    expect(kill.stderr).toContain('it ended by itself first (COMPLETED, exit 0)')
    await waitFor('the supervisor to exit', () => !isAlive(supervisor))
    expect(readRecord<Record>(repo.dir, id)).toMatchObject({ status: 'COMPLETED', exit_code: 0 })
  })
})

describe('restore never deletes through a link', () => {
  test('a tracked folder turned into an ignored link to a folder outside: the file there survives restore', async () => {
    const repo = tmpGitRepo()
    const outside = tmpDir()
    writeFileSync(join(outside, 'precious.txt'), 'not the worktree\n')
    const session = await finishedSession(repo, 'true')
    const id = session.id as string
    const wt = session.worktree_dir as string
    const checkpoint = await cli(['session', 'checkpoint', id, '-m', 'before the folder'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(checkpoint.exitCode, checkpoint.stderr).toBe(0)
    // The folder is tracked (in the index) with the file's name, then the folder becomes a link to outside,
    // ignored (as a user's own data link is): restore removes what the checkpoint lacks, by the index's names.
    mkdirSync(join(wt, 'data'))
    writeFileSync(join(wt, 'data', 'precious.txt'), 'tracked\n')
    const git = (...args: string[]) =>
      spawnSync('git', ['-C', wt, ...args], { env: repo.env, encoding: 'utf8' })
    git('add', 'data')
    git('commit', '-q', '-m', 'data')
    spawnSync('rm', ['-r', join(wt, 'data')])
    symlinkSync(outside, join(wt, 'data'))
    writeFileSync(join(wt, '.gitignore'), '/data\n')
    const restore = await cli(['session', 'restore', id, '0'], { cwd: repo.dir, env: repo.env })
    expect(restore.exitCode, restore.stderr).toBe(0)
    expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('not the worktree\n')
    expect(lstatSync(join(wt, 'data')).isSymbolicLink()).toBe(true)
  })
})

describe('--base names a branch before a tag', () => {
  test('a tag called like the branch: the session starts at the branch, and merge lands on it without the tagged commit', async () => {
    const repo = tmpGitRepo()
    repo.git('switch', '-q', '-c', 'develop')
    repo.write('dev.txt', 'the branch\n')
    repo.git('add', 'dev.txt')
    repo.git('commit', '-q', '-m', 'develop work')
    const developTip = repo.git('rev-parse', 'refs/heads/develop')
    // A tag `develop` on another line of history (the one git's own lookup order would pick).
    repo.git('switch', '-q', '--detach', 'main')
    repo.write('tagged.txt', 'not on develop\n')
    repo.git('add', 'tagged.txt')
    repo.git('commit', '-q', '-m', 'tagged commit')
    repo.git('tag', 'develop')
    const tagged = repo.git('rev-parse', 'refs/tags/develop')
    repo.git('switch', '-q', 'develop')
    const session = await finishedSession(repo, 'echo work > work.txt', ['--base', 'develop'])
    expect(session.base_commit).toBe(developTip)
    expect(session.base_ref).toBe('develop')
    const merge = await cli(['session', 'merge', session.id as string], { cwd: repo.dir, env: repo.env })
    expect(merge.exitCode, merge.stderr).toBe(0)
    const merged = repo.git('rev-list', 'refs/heads/develop')
    expect(merged).toContain(developTip)
    expect(merged).not.toContain(tagged)
    expect(repo.git('show', 'refs/heads/develop:work.txt')).toBe('work')
  })
})
