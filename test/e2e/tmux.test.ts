import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { readRecords, writeRecord } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote, tmuxServers, waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & {
  id: string
  status: string
  state?: string | null
  pid: number | null
  worktree_dir: string
  tmux_session?: string
  runs: (Record<string, unknown> & { pid: number; supervisor_pid: number })[]
}

const { harnessTmux, userTmux } = tmuxServers()

const hasSession = (name: string) => {
  try {
    harnessTmux.tmux('has-session', '-t', `=${name}`)
    return true
  } catch {
    return false
  }
}
const record = (dir: string, id: string) => readRecords<Rec>(dir).find((r) => r.id === id)

/** A repository whose fake agents draw a screen and ask a question once `askFile` exists. */
function setup() {
  const repo = tmpGitRepo()
  const askFile = join(repo.home, 'ask')
  const agents = fakeAgents(repo.home, repo.env, { tui: { askFile }, sleepMs: 600_000 })
  const env: NodeJS.ProcessEnv = { ...agents.env, HARNESS_TMUX_SOCKET: harnessTmux.socket }
  return { repo, agents, askFile, env }
}

describe('interactive agents hosted in tmux', () => {
  test('run --tmux: RUNNING at once; state busy → waiting → busy; attach; the terminal closes; kill; hooks', async () => {
    const { repo, agents, askFile, env } = setup()
    // The hook (trusted user config) appends what it is told to a file: argv, no shell. A hook of a state change
    // takes 2.5 s first, so that hooks are still queued in the supervisor when `kill` ends the tmux session (as
    // one slow machine made them): each must still run once, the supervisor must not die of that hang-up first.
    const hookOut = join(repo.home, 'hook.jsonl')
    const hookCode = `if (process.env.HARNESS_STATE) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2500); require('fs').appendFileSync(process.argv[1], JSON.stringify({id: process.env.HARNESS_SESSION_ID, status: process.env.HARNESS_STATUS, previous: process.env.HARNESS_PREVIOUS_STATUS, state: process.env.HARNESS_STATE}) + '\\n')`
    const configFile = join(env.XDG_CONFIG_HOME as string, 'harness', 'config.json')
    mkdirSync(dirname(configFile), { recursive: true })
    writeFileSync(
      configFile,
      JSON.stringify({ hooks: { on_status: [process.execPath, '-e', hookCode, hookOut] } }),
    )

    const run = await cli(['run', '--tmux', '--json', '-a', 'claude', 'draw and ask'], { cwd: repo.dir, env })
    expect(run.exitCode, run.stderr).toBe(0)
    const started = json<Rec & { liveness: string }>(run)
    const id = started.id
    expect(started).toMatchObject({ status: 'RUNNING', liveness: 'running', tmux_session: `harness-${id}` })
    expect(started.pid).toBeGreaterThan(0)
    expect(isAlive(started.pid as number)).toBe(true)
    expect(isAlive(started.runs[0]?.supervisor_pid as number)).toBe(true)
    expect(hasSession(`harness-${id}`)).toBe(true)
    const agent = await waitFor('the agent to log its start', () => agents.starts()[0])
    expect(agent.stdin_tty).toBe(true)

    await waitFor('state busy', () => record(repo.dir, id)?.state === 'busy')
    writeFileSync(askFile, '')
    await waitFor('state waiting', () => record(repo.dir, id)?.state === 'waiting')
    const list = await cli(['session', 'list'], { cwd: repo.dir, env })
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+claude\\s+RUNNING\\s+waiting`))
    const shown = json<Rec>(await cli(['session', 'show', id, '--json'], { cwd: repo.dir, env }))
    expect(shown.state).toBe('waiting')
    harnessTmux.sendKeys(`harness-${id}`, '1', 'Enter')
    await waitFor('state busy again', () => record(repo.dir, id)?.state === 'busy')
    expect(agents.entries().find((e) => e.event === 'answer')).toMatchObject({ text: '1' })

    // A second client, in the user's terminal, shows the agent's screen.
    const attachScript = `cd ${shellQuote(repo.dir)}\n${shellQuote(HARNESS_BIN)} session attach ${id}`
    await userTmux.start('terminal', attachScript, env)
    await waitFor('the agent screen in the user terminal', () =>
      userTmux.tmux('capture-pane', '-p', '-t', 'terminal').includes('Working… (esc to interrupt)'),
    )
    // Closing the user's terminal leaves the agent running.
    userTmux.killSession('terminal')
    await waitFor('the client to go', () => harnessTmux.tmux('list-clients').trim() === '')
    expect(record(repo.dir, id)?.status).toBe('RUNNING')
    expect(isAlive(started.pid as number)).toBe(true)
    expect(hasSession(`harness-${id}`)).toBe(true)

    const kill = await cli(['session', 'kill', id], { cwd: repo.dir, env })
    expect(kill.exitCode, kill.stderr).toBe(0)
    expect(record(repo.dir, id)).toMatchObject({ status: 'KILLED' })
    await waitFor('the agent and supervisor to be gone', () =>
      [started.pid as number, started.runs[0]?.supervisor_pid as number].every((pid) => !isAlive(pid)),
    )
    expect(hasSession(`harness-${id}`)).toBe(false)

    // The pane's output went to the session's log.
    const logs = await cli(['session', 'logs', id], { cwd: repo.dir, env })
    expect(logs.stdout).toContain('Do you want to make this edit')
    // As text: the agent's screen drawing (\x1b[2J\x1b[H…) is taken out; --raw keeps it.
    expect(logs.stdout).not.toContain('\u001b')
    const raw = await cli(['session', 'logs', id, '--raw'], { cwd: repo.dir, env })
    expect(raw.stdout).toContain('\u001b[2J')

    // Each change ran the hook once, with a consistent environment.
    type Line = { id: string; status: string; previous: string; state: string }
    const lines = await waitFor('the last hook', () => {
      const text = readFileSync(hookOut, 'utf8')
      return text.includes('"KILLED"')
        ? text
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Line)
        : undefined
    })
    expect(lines.every((l) => l.id === id)).toBe(true)
    expect(lines).toContainEqual({ id, status: 'RUNNING', previous: '', state: '' })
    expect(lines).toContainEqual({ id, status: 'KILLED', previous: 'RUNNING', state: '' })
    const states = lines.filter((l) => l.status === 'RUNNING' && l.previous === 'RUNNING').map((l) => l.state)
    expect(states).toEqual(['busy', 'waiting', 'busy'])
    expect(lines).toHaveLength(5)
  })

  test('pause, then resume starts a new tmux session in the same worktree; wait and recover see it', async () => {
    const { repo, env } = setup()
    const first = json<Rec>(
      await cli(['run', '--tmux', '--json', '-a', 'claude', 'task'], { cwd: repo.dir, env }),
    )
    const id = first.id
    const pause = await cli(['session', 'pause', id], { cwd: repo.dir, env })
    expect(pause.exitCode, pause.stderr).toBe(0)
    expect(record(repo.dir, id)).toMatchObject({ status: 'PAUSED' })
    await waitFor('the first tmux session to end', () => !hasSession(`harness-${id}`))
    expect(isAlive(first.pid as number)).toBe(false)

    // A session last hosted in tmux resumes into tmux.
    const resume = await cli(['session', 'resume', id, '--json'], { cwd: repo.dir, env })
    expect(resume.exitCode, resume.stderr).toBe(0)
    const resumed = json<Rec>(resume)
    expect(resumed).toMatchObject({ status: 'RUNNING', tmux_session: `harness-${id}` })
    const supervisor = resumed.runs[1]?.supervisor_pid as number
    expect(supervisor).not.toBe(first.runs[0]?.supervisor_pid)
    const [panePid, panePath] = harnessTmux
      .tmux('display-message', '-p', '-t', `harness-${id}`, '#{pane_pid} #{pane_current_path}')
      .trim()
      .split(' ')
    expect(Number(panePid)).toBe(supervisor)
    expect(realpathSync(panePath as string)).toBe(realpathSync(first.worktree_dir))

    const wait = await cli(['session', 'wait', id, '--timeout', '300ms'], { cwd: repo.dir, env })
    expect(wait.exitCode).toBe(124)
    const scan = await cli(['session', 'recover', '--scan', '--json'], { cwd: repo.dir, env })
    expect(json<unknown[]>(scan)).toEqual([])

    const kill = await cli(['session', 'kill', id], { cwd: repo.dir, env })
    expect(kill.exitCode, kill.stderr).toBe(0)
    const waited = await cli(['session', 'wait', id], { cwd: repo.dir, env })
    expect(waited.exitCode).toBe(143)
    expect(hasSession(`harness-${id}`)).toBe(false)
  })

  test('session send answers a waiting agent without attaching: the text typed as it is, then Enter', async () => {
    const { repo, agents, askFile, env } = setup()
    const run = await cli(['run', '--tmux', '--json', '--name', 'asker', '-a', 'claude', 'ask'], {
      cwd: repo.dir,
      env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const id = json<Rec>(run).id
    await waitFor('state busy', () => record(repo.dir, id)?.state === 'busy')
    writeFileSync(askFile, '')
    await waitFor('state waiting', () => record(repo.dir, id)?.state === 'waiting')
    // Words a shell or tmux would read otherwise: a quote, a variable, key names, a final ";" (tmux's separator).
    const text = `it's $HOME -- Enter C-c ok;`
    const send = await cli(['session', 'send', 'asker', '--json', '--', text], { cwd: repo.dir, env })
    expect(send.exitCode, send.stderr).toBe(0)
    expect(json(send)).toEqual({ id, tmux_session: `harness-${id}`, text })
    await waitFor('the agent to read the line', () => agents.entries().find((e) => e.event === 'answer'))
    expect(agents.entries().find((e) => e.event === 'answer')).toMatchObject({ text })
    await waitFor('state busy again', () => record(repo.dir, id)?.state === 'busy')

    // A control character is refused before anything is typed.
    for (const bad of ['yes\n', '\u001b[A', 'a\tb', '\u0003']) {
      const refused = await cli(['session', 'send', id, bad], { cwd: repo.dir, env })
      expect(refused.exitCode, JSON.stringify(bad)).toBe(2)
      expect(refused.stderr).toContain('control character')
    }
    // A foreign copy of its record names the same tmux session: it is never typed into.
    const copy = { ...(record(repo.dir, id) as Rec), id: 'copy0001', name: null }
    writeRecord(repo.dir, repo.env, copy, { seal: false })
    const foreign = await cli(['session', 'send', 'copy0001', 'hello', '--json'], { cwd: repo.dir, env })
    expect(foreign.exitCode).toBe(4)
    expect(JSON.parse(foreign.stderr).error.code).toBe('FOREIGN')
    expect(agents.entries().filter((e) => e.event === 'answer')).toHaveLength(1)

    const kill = await cli(['session', 'kill', id], { cwd: repo.dir, env })
    expect(kill.exitCode, kill.stderr).toBe(0)
    const ended = await cli(['session', 'send', id, 'hello'], { cwd: repo.dir, env })
    expect(ended.exitCode).toBe(4)
    expect(ended.stderr).toContain(`session "${id}" is KILLED, not running`)
    // A session not hosted in tmux has no terminal to type into.
    const plain = json<Rec>(await cli(['run', '-a', 'exec', '--json', '--', 'true'], { cwd: repo.dir, env }))
    const notTmux = await cli(['session', 'send', plain.id, 'hello'], { cwd: repo.dir, env })
    expect(notTmux.exitCode).toBe(4)
    expect(notTmux.stderr).toContain('is not hosted in tmux')
  })

  test('config interactive.host "tmux" hosts a run from a terminal in tmux; a failing hook is logged, never fatal', async () => {
    const { repo, env } = setup()
    const configFile = join(env.XDG_CONFIG_HOME as string, 'harness', 'config.json')
    mkdirSync(dirname(configFile), { recursive: true })
    writeFileSync(
      configFile,
      JSON.stringify({ interactive: { host: 'tmux' }, hooks: { on_status: ['false'] } }),
    )
    const out = join(repo.home, 'run.out')
    // A real terminal (a pane of the user's server): without the config this run would be in the foreground.
    const script = `cd ${shellQuote(repo.dir)}\n${shellQuote(HARNESS_BIN)} run -a claude task; echo "exit $?" > ${shellQuote(out)}`
    await userTmux.start('configured', script, env)
    await waitFor('harness run to return', () => {
      try {
        return readFileSync(out, 'utf8').trim() === 'exit 0'
      } catch {
        return false
      }
    })
    const [started] = readRecords<Rec>(repo.dir)
    const id = started?.id as string
    expect(started).toMatchObject({ status: 'RUNNING', tmux_session: `harness-${id}` })
    expect(hasSession(`harness-${id}`)).toBe(true)
    const log = join(repo.dir, '.harness', 'logs', `${id}.log`)
    await waitFor('the failed hook noted in the log', () =>
      readFileSync(log, 'utf8').includes('[harness] hooks.on_status (false) exited with 1'),
    )
    const kill = await cli(['session', 'kill', id], { cwd: repo.dir, env })
    expect(kill.exitCode, kill.stderr).toBe(0)
    expect(record(repo.dir, id)?.status).toBe('KILLED')
  })

  test('without tmux, --tmux is exit 5 naming tmux, and nothing is made', async () => {
    const { repo, env } = setup()
    // A PATH with node, git and the agents, but no tmux.
    const bin = join(repo.home, 'no-tmux-bin')
    mkdirSync(bin)
    for (const tool of ['node', 'git']) {
      symlinkSync(execFileSync('which', [tool], { encoding: 'utf8' }).trim(), join(bin, tool))
    }
    const path = `${join(repo.home, 'bin')}:${bin}`
    const run = await cli(['run', '--tmux', '-a', 'claude', 'task'], {
      cwd: repo.dir,
      env: { ...env, PATH: path },
    })
    expect(run.exitCode).toBe(5)
    expect(run.stderr).toMatch(/^harness: tmux is not installed/)
    expect(readRecords(repo.dir)).toEqual([])
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
  })
})
