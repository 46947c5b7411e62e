import { describe, expect, test } from 'vitest'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { readRecords } from '../helpers/sessions.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { TmuxServer, waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; status: string; pid: number | null; runs: Rec[] }

// `run --timeout` / `resume --timeout` (SPEC §5): the run is stopped as `pause` stops it, PAUSED "timeout",
// exit 124, `wait` 124, and `resume` goes on. The agents sleep far longer than the timeout, so nothing here
// depends on how fast the machine is: only on the timeout firing at all.
const PAUSED_TIMEOUT = { status: 'PAUSED', stop_reason: 'timeout', exit_code: 124, completed_at: null }

function setup() {
  const repo = tmpGitRepo()
  const agents = fakeAgents(repo.home, repo.env, { sleepMs: 600_000 })
  // A resume that finishes by itself: the same agents, done at once.
  const quick = { ...agents.env, FAKE_AGENT_SLEEP_MS: '0' }
  return { repo, agents, quick }
}

describe('run --timeout', () => {
  test('in the foreground: the agent is stopped, PAUSED "timeout", exit 124; wait 124; resume goes on', async () => {
    const { repo, agents, quick } = setup()
    const run = await cli(['run', '-a', 'codex', '--json', '--timeout', '1', 'task'], {
      cwd: repo.dir,
      env: agents.env,
      process: true,
    })
    expect(run.exitCode, run.stderr).toBe(124)
    const record = json<Rec>(run)
    expect(record).toMatchObject(PAUSED_TIMEOUT)
    expect(record.stop_request).toMatchObject({ action: 'pause', reason: 'timeout' })
    const [started] = agents.starts()
    expect(isAlive(started?.pid as number)).toBe(false)
    // Stopped by the timeout's SIGTERM: logged by the agent, or (on a machine so busy that node had not yet set
    // its handler when the second was up) the signal it died of.
    const signalled =
      agents.entries().some((e) => e.event === 'sigterm') || record.runs.at(-1)?.signal === 'SIGTERM'
    expect(signalled, JSON.stringify(record.runs.at(-1))).toBe(true)
    const wait = await cli(['session', 'wait', record.id], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(124)
    // A resume has no timeout unless given: this one ends by itself.
    const resume = await cli(['session', 'resume', record.id, '--json', 'go on'], {
      cwd: repo.dir,
      env: quick,
    })
    expect(resume.exitCode, resume.stderr).toBe(0)
    expect(json<Rec>(resume)).toMatchObject({ status: 'COMPLETED', exit_code: 0, stop_request: null })
  })

  test('--detach: the supervisor enforces it; wait 124; resume --timeout bounds the resumed run too', async () => {
    const { repo, agents } = setup()
    const run = await cli(['run', '-a', 'claude', '--detach', '--json', '--timeout', '1s', 'task'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id } = json<Rec>(run)
    const wait = await cli(['session', 'wait', id, '--json'], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(124)
    expect(json<Rec>(wait)).toMatchObject(PAUSED_TIMEOUT)
    const resume = await cli(['session', 'resume', id, '--detach', '--timeout', '1', 'go on'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(resume.exitCode, resume.stderr).toBe(0)
    const again = await cli(['session', 'wait', id, '--json'], { cwd: repo.dir, env: repo.env })
    expect(again.exitCode).toBe(124)
    expect(json<Rec>(again)).toMatchObject(PAUSED_TIMEOUT)
    expect(json<Rec>(again).runs).toHaveLength(2)
  })

  test('--tmux: the supervisor in the pane enforces it; wait 124; the tmux session ends', async () => {
    const { repo, agents } = setup()
    const server = new TmuxServer(tmpDir())
    try {
      const env = { ...agents.env, HARNESS_TMUX_SOCKET: server.socket }
      const run = await cli(['run', '--tmux', '--json', '--timeout', '1', '-a', 'claude', 'task'], {
        cwd: repo.dir,
        env,
      })
      expect(run.exitCode, run.stderr).toBe(0)
      const { id } = json<Rec>(run)
      const wait = await cli(['session', 'wait', id], { cwd: repo.dir, env })
      expect(wait.exitCode).toBe(124)
      expect(readRecords<Rec>(repo.dir)[0]).toMatchObject(PAUSED_TIMEOUT)
      await waitFor('the tmux session to end', () => !server.hasSession(`harness-${id}`))
    } finally {
      server.stop()
    }
  })

  test('--timeout 30d, past what one timer holds, does not fire at once', async () => {
    const { repo, agents } = setup()
    const env = { ...agents.env, FAKE_AGENT_SLEEP_MS: '1500' }
    const run = await cli(['run', '-a', 'codex', '--json', '--timeout', '30d', 'task'], {
      cwd: repo.dir,
      env,
      process: true,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(json<Rec>(run)).toMatchObject({ status: 'COMPLETED', stop_reason: 'exited', stop_request: null })
  })

  test('a bad --timeout is a usage error before anything is made', async () => {
    const { repo, agents } = setup()
    for (const value of ['0', 'soon', '-5s']) {
      const run = await cli(['run', '-a', 'codex', `--timeout=${value}`, 'task'], {
        cwd: repo.dir,
        env: agents.env,
      })
      expect(run.exitCode, value).toBe(2)
      expect(run.stderr).toContain('--timeout')
    }
    expect(readRecords(repo.dir)).toEqual([])
    expect(agents.starts()).toEqual([])
  })
})
