import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type FakeAgentEntry, fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { TmuxServer, waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; status: string; worktree_dir: string }

/**
 * SPEC §6, the agent's environment: whatever the caller's PWD and git location variables (a git hook, a
 * wrapper script), the agent gets PWD = the folder it starts in, and none of git's location variables, in
 * every form of run: foreground headless, background, hosted in tmux, and on resume.
 */
const tmux = new TmuxServer(tmpDir())
beforeAll(async () => {
  await waitFor('the tmux server', () => {
    try {
      tmux.tmux('list-sessions')
      return true
    } catch {
      return false
    }
  })
})
afterAll(() => tmux.stop())

function setup() {
  const repo = tmpGitRepo()
  const agents = fakeAgents(repo.home, repo.env, { output: 'done' })
  const env: NodeJS.ProcessEnv = {
    ...agents.env,
    HARNESS_TMUX_SOCKET: tmux.socket,
    // What a caller inside a git hook, or a shell that was somewhere else, hands down.
    PWD: repo.dir,
    GIT_DIR: join(repo.dir, '.git'),
    GIT_WORK_TREE: repo.dir,
    GIT_INDEX_FILE: join(repo.dir, '.git', 'index'),
    GIT_COMMON_DIR: join(repo.dir, '.git'),
    GIT_OBJECT_DIRECTORY: join(repo.dir, '.git', 'objects'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: join(repo.dir, '.git', 'objects'),
    GIT_NAMESPACE: 'elsewhere',
  }
  return { repo, agents, env }
}

function expectOwnEnvironment(start: FakeAgentEntry | undefined, worktree: string) {
  expect(start?.cwd).toBe(worktree)
  expect(start?.pwd).toBe(worktree)
  expect(start?.git_env).toEqual([])
}

describe("the agent's environment", () => {
  test('foreground headless, then a headless resume: PWD is the worktree, no git location variable', async () => {
    const { repo, agents, env } = setup()
    const run = await cli(['run', '--json', '-a', 'claude', 'edit'], { cwd: repo.dir, env, process: true })
    expect(run.exitCode, run.stderr).toBe(0)
    const record = json<Rec>(run)
    const resume = await cli(['session', 'resume', record.id, '--json', 'more'], {
      cwd: repo.dir,
      env,
      process: true,
    })
    expect(resume.exitCode, resume.stderr).toBe(0)
    const starts = agents.starts()
    expect(starts).toHaveLength(2)
    for (const start of starts) expectOwnEnvironment(start, record.worktree_dir)
  })

  test('background (--detach): the same', async () => {
    const { repo, agents, env } = setup()
    const run = await cli(['run', '--detach', '--json', '-a', 'claude', 'edit'], { cwd: repo.dir, env })
    expect(run.exitCode, run.stderr).toBe(0)
    const record = json<Rec>(run)
    await cli(['session', 'wait', record.id], { cwd: repo.dir, env })
    const resume = await cli(['session', 'resume', record.id, '--detach', '--json', 'more'], {
      cwd: repo.dir,
      env,
    })
    expect(resume.exitCode, resume.stderr).toBe(0)
    await cli(['session', 'wait', record.id], { cwd: repo.dir, env })
    const starts = agents.starts()
    expect(starts).toHaveLength(2)
    for (const start of starts) expectOwnEnvironment(start, record.worktree_dir)
  })

  test('hosted in tmux: the same', async () => {
    const { repo, agents, env } = setup()
    const run = await cli(['run', '--tmux', '--json', '-a', 'claude', 'edit'], { cwd: repo.dir, env })
    expect(run.exitCode, run.stderr).toBe(0)
    const record = json<Rec>(run)
    await waitFor('the agent to start', () => agents.starts().length === 1)
    await cli(['session', 'wait', record.id], { cwd: repo.dir, env })
    expectOwnEnvironment(agents.starts()[0], record.worktree_dir)
  })
})
