import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { type FakeAgentEntry, fakeAgents } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote, TmuxServer, waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & {
  id: string
  status: string
  exit_code: number | null
  runs: Record<string, unknown>[]
}

const agentDir = (repo: string, id: string) => join(repo, '.harness', 'agents', id)

describe('per-agent files under .harness/agents/<id>/', () => {
  test('two pi and two aider sessions in one folder: each resume reaches its own conversation', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const run = async (agent: string, prompt: string) => {
      const result = await cli(['run', '-a', agent, '--no-worktree', '--json', prompt], {
        cwd: repo.dir,
        env: agents.env,
      })
      expect(result.exitCode, result.stderr).toBe(0)
      return json<Rec>(result)
    }
    const sessions = [
      await run('pi-agent', 'pi alpha'),
      await run('pi-agent', 'pi beta'),
      await run('aider', 'aider gamma'),
      await run('aider', 'aider delta'),
    ]
    const prompts = ['pi alpha', 'pi beta', 'aider gamma', 'aider delta']
    for (const session of sessions) {
      const resumed = await cli(['session', 'resume', session.id, '--json', `more for ${session.id}`], {
        cwd: repo.dir,
        env: agents.env,
      })
      expect(resumed.exitCode, resumed.stderr).toBe(0)
    }
    const conversations = agents.entries().filter((e: FakeAgentEntry) => e.event === 'conversation')
    expect(conversations).toHaveLength(8)
    sessions.forEach((session, i) => {
      const file = join(agentDir(repo.dir, session.id), i < 2 ? 'pi.jsonl' : 'aider.chat.md')
      const [start, resume] = conversations.filter((c) => c.file === file)
      // The start began a new conversation in the session's own file; the resume found exactly that one.
      expect(start?.held, `${session.id} start`).toBeNull()
      expect(resume?.held, `${session.id} resume`).toBe(`${prompts[i]}\n`)
      expect(statSync(agentDir(repo.dir, session.id)).mode & 0o777).toBe(0o700)
    })
    expect(statSync(join(repo.dir, '.harness', 'agents')).mode & 0o777).toBe(0o700)
    // Nothing was written to the folder's shared defaults.
    expect(existsSync(join(repo.dir, '.aider.chat.history.md'))).toBe(false)
    // The folder goes with its session, and only with its own.
    const [gone, kept] = sessions as [Rec, Rec]
    const deleted = await cli(['session', 'delete', gone.id], { cwd: repo.dir, env: agents.env })
    expect(deleted.exitCode, deleted.stderr).toBe(0)
    expect(existsSync(agentDir(repo.dir, gone.id))).toBe(false)
    expect(existsSync(join(agentDir(repo.dir, kept.id), 'pi.jsonl'))).toBe(true)
  })

  test('a failed start leaves no agent folder behind', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const refused = await cli(['run', '-a', 'aider', '-P', 'readonly', 'x'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain('provider "aider" has no readonly level; it has: supervised, autonomous')
    expect(existsSync(join(repo.dir, '.harness', 'agents'))).toBe(false)
  })

  test('pi exiting 0 after a failed request (--mode json) is recorded FAILED with its error', async () => {
    const repo = tmpGitRepo()
    const failed = JSON.stringify({
      type: 'agent_end',
      messages: [{ role: 'assistant', content: [], stopReason: 'error', errorMessage: 'Connection error.' }],
    })
    const agents = fakeAgents(repo.home, repo.env, { output: `{"type":"session","version":3}\n${failed}` })
    const run = await cli(['run', '-a', 'pi-agent', '--json', 'task'], { cwd: repo.dir, env: agents.env })
    expect(run.exitCode).toBe(1)
    const record = json<Rec>(run)
    expect(record).toMatchObject({ status: 'FAILED', exit_code: 1, stop_reason: 'agent-error' })
    expect(record.runs[0]).toMatchObject({ exit_code: 0, error: 'Connection error.' })
    const ok = fakeAgents(repo.home, repo.env, { output: '{"type":"agent_end","messages":[]}' })
    const fine = await cli(['session', 'resume', record.id, '--json'], { cwd: repo.dir, env: ok.env })
    expect(fine.exitCode, fine.stderr).toBe(0)
    expect(json<Rec>(fine)).toMatchObject({ status: 'COMPLETED', exit_code: 0 })
  })

  test.skipIf(process.getuid?.() !== 0)(
    'as root, claude autonomous is refused before starting (claude would refuse it), unless IS_SANDBOX=1',
    async () => {
      const repo = tmpGitRepo()
      const agents = fakeAgents(repo.home, repo.env)
      const refused = await cli(['run', '-a', 'claude', '-P', 'autonomous', 'x'], {
        cwd: repo.dir,
        env: agents.env,
      })
      expect(refused.exitCode).toBe(2)
      expect(refused.stderr).toContain(
        'harness: claude refuses --dangerously-skip-permissions when run as root',
      )
      expect(refused.stderr).toContain('IS_SANDBOX=1')
      expect(agents.starts()).toHaveLength(0)
      expect(existsSync(join(repo.dir, '.harness', 'sessions'))).toBe(false)
      expect(repo.git('branch', '--list', 'harness/*')).toBe('')
      const sandboxed = await cli(['run', '-a', 'claude', '-P', 'autonomous', 'x'], {
        cwd: repo.dir,
        env: { ...agents.env, IS_SANDBOX: '1' },
      })
      expect(sandboxed.exitCode, sandboxed.stderr).toBe(0)
    },
  )
})

describe('aider in a terminal', () => {
  const tmux = new TmuxServer(tmpDir())
  afterAll(() => tmux.stop())

  test('the chat starts without --message; the prompt is shown on stderr to paste', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const err = join(repo.home, 'stderr.txt')
    const done = join(repo.home, 'done')
    const script = `cd ${shellQuote(repo.dir)}
${shellQuote(HARNESS_BIN)} run -a aider "fix the flaky test" 2>${shellQuote(err)}; touch ${shellQuote(done)}; sleep 60`
    await tmux.start('aider', script, agents.env)
    await waitFor('the run', () => existsSync(done), 60_000)
    tmux.killSession('aider')
    const [start] = agents.starts()
    expect(start?.stdin_tty).toBe(true)
    expect(start?.args).not.toContain('--message')
    expect(start?.args?.[0]).toBe('--chat-history-file')
    expect(readFileSync(err, 'utf8')).toContain(
      'harness: aider starts without your prompt; paste it into the chat:\nfix the flaky test\n',
    )
  })
})
