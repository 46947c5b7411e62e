import { spawn } from 'node:child_process'
import { mkdirSync, rmSync, watch, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { FileLock } from '../../src/sessions/record/lock.js'
import { fakeAgents } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { readRecords } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; status: string }

// Steps that every run of a repository shares (docs/security.md, "Shared steps"): `git worktree add` reads every
// registered worktree's admin folder, and a sibling's half-made one made parallel runs fail at random (exit 5).
describe('parallel runs in one repository', () => {
  test("a run waits for a sibling's git worktree add instead of reading its half-made registration", async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const sessions = join(repo.dir, '.harness', 'sessions')
    mkdirSync(sessions, { recursive: true })
    // A sibling run in the middle of `git worktree add`: it holds the shared step, its registration half made
    // (git writes `gitdir`, then `commondir`: caught between the two, git fails "failed to read .../commondir").
    const sibling = await FileLock.acquire(join(sessions, '_git-worktrees.lock'))
    const half = join(repo.dir, '.git', 'worktrees', 'sibling')
    mkdirSync(half, { recursive: true })
    writeFileSync(join(half, 'gitdir'), `${join(repo.home, 'sibling', '.git')}\n`)
    writeFileSync(join(half, 'commondir'), '')
    const child = spawn(HARNESS_BIN, ['run', '--detach', '--json', '-a', 'claude', 'task'], {
      cwd: repo.dir,
      env: agents.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    // Each attempt at the lock makes a temporary file named after harness's pid: it waits for the sibling. A
    // harness that does not wait has exited by then.
    const waiting = new Promise<void>((resolve) => {
      const watcher = watch(sessions, (_event, name) => {
        if (!name?.startsWith(`_git-worktrees.lock.${child.pid}.`)) return
        watcher.close()
        resolve()
      })
      void exited.then(() => {
        watcher.close()
        resolve()
      })
    })
    await waiting
    // The sibling's add completes (its registration whole, here gone) and it lets go.
    rmSync(half, { recursive: true })
    sibling.release()
    const code = await exited
    expect(code, stderr).toBe(0)
    expect((JSON.parse(stdout) as Rec).id).toBeTruthy()
    // `run --detach` returns once the record holds the agent's pid, maybe before the agent logged its start.
    await waitFor('the agent to start', () => agents.starts().length === 1)
    // Its supervisor writes the record at the end: the test's folder is removed only after that.
    await settled(repo, [(JSON.parse(stdout) as Rec).id])
  })

  test('10 runs started at once all start, each in its own worktree', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const runs = await Promise.all(
      Array.from({ length: 10 }, () =>
        cli(['run', '--detach', '--json', '-a', 'codex', 'task'], { cwd: repo.dir, env: agents.env }),
      ),
    )
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0)
    const ids = new Set(runs.map((run) => json<Rec>(run).id))
    expect(ids.size).toBe(10)
    expect(
      readRecords<Rec>(repo.dir)
        .map((r) => r.id)
        .sort(),
    ).toEqual([...ids].sort())
    expect(repo.git('worktree', 'list').trim().split('\n')).toHaveLength(11)
    await settled(repo, [...ids])
  })
})

/** Waits until each detached session has ended (its supervisor has written its last record). */
async function settled(repo: { dir: string; env: NodeJS.ProcessEnv }, ids: string[]): Promise<void> {
  for (const id of ids) {
    const waited = await cli(['session', 'wait', id], { cwd: repo.dir, env: repo.env })
    expect(waited.exitCode, waited.stderr).toBe(0)
  }
}
