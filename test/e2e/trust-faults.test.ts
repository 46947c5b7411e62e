import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpGitRepo, tmpUserIn } from '../helpers/tmp.js'
import { canMount, fillDisk, mountTmpfs, unmountAfterAll } from '../helpers/tmpfs.js'

/**
 * A full disk mid-merge is DISK_FULL (SPEC §10, "Disk faults"; docs/security.md, "Faults"): the
 * repository lives on a small tmpfs the test mounts (root only; skipped visibly elsewhere), filled before
 * the merge writes its objects.
 */
unmountAfterAll()

describe.skipIf(!canMount)('faults (mounts a tmpfs: root only)', () => {
  test('merge on a full disk: DISK_FULL (exit 1), not SNAPSHOT_FAILED, and the main branch unmoved', async () => {
    const { mnt, base } = mountTmpfs('4m')
    const user = tmpUserIn(base)
    const { home, env } = user
    const repo = join(mnt, 'repo')
    mkdirSync(repo)
    const git = (...args: string[]) => user.git(repo, ...args)
    git('init', '-q')
    writeFileSync(join(repo, 'README.md'), 'project\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'project')
    const agents = fakeAgents(home, env)
    const run = await cli(['run', '-a', 'claude', '--json', 'task'], { cwd: repo, env: agents.env })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id, worktree_dir } = json<{ id: string; worktree_dir: string }>(run)
    // Uncommitted work that merge must commit first: its objects need room.
    writeFileSync(join(worktree_dir, 'work.txt'), `${'the session did this\n'.repeat(50)}`)
    const main = git('rev-parse', 'main')
    fillDisk(mnt)
    const merge = await cli(['--json', 'session', 'merge', id], { cwd: repo, env })
    expect(merge.exitCode, merge.stderr).toBe(1)
    expect(JSON.parse(merge.stderr).error.code, merge.stderr).toBe('DISK_FULL')
    expect(merge.stderr).not.toContain('permissions?')
    expect(git('rev-parse', 'main')).toBe(main)
  })
})

test("temporary indexes live under .harness/tmp, never in $TMPDIR, and a killed process's one is swept", async () => {
  const repo = tmpGitRepo()
  const agents = fakeAgents(repo.home, repo.env)
  const temp = join(repo.home, '..', 'system-tmp')
  mkdirSync(temp)
  const env = { ...repo.env, TMPDIR: temp }
  const run = await cli(['run', '-a', 'claude', '--json', 'task'], {
    cwd: repo.dir,
    env: { ...agents.env, TMPDIR: temp },
  })
  expect(run.exitCode, run.stderr).toBe(0)
  const { id, worktree_dir } = json<{ id: string; worktree_dir: string }>(run)
  writeFileSync(join(worktree_dir, 'work.txt'), 'work\n')
  // What a checkpoint SIGKILLed mid-way leaves: an index (every file name of the worktree) of a dead process.
  const dead = spawnSync('true').pid as number
  const leftover = join(repo.dir, '.harness', 'tmp', `index-${dead}-abc123`)
  mkdirSync(leftover, { recursive: true })
  writeFileSync(join(leftover, 'index'), 'DIRC')
  const checkpoint = await cli(['session', 'checkpoint', id], { cwd: repo.dir, env, process: true })
  expect(checkpoint.exitCode, checkpoint.stderr).toBe(0)
  expect(existsSync(leftover)).toBe(false)
  const diff = await cli(['session', 'diff', '--stat', id], { cwd: repo.dir, env, process: true })
  expect(diff.exitCode, diff.stderr).toBe(0)
  expect(diff.stdout).toContain('work.txt')
  expect(readdirSync(temp)).toEqual([])
  expect(readdirSync(join(repo.dir, '.harness', 'tmp'))).toEqual([])
})
