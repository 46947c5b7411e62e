import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, watch } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { FileLock } from '../../src/sessions/record/lock.js'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { readRecords, writeProjectConfig } from '../helpers/sessions.js'
import { tmpGitRepo, tmpPlainDir } from '../helpers/tmp.js'
import { shellQuote, tmuxServer, waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; status: string; runs: Rec[] }

const tmux = tmuxServer()

const H = shellQuote(HARNESS_BIN)

const records = (dir: string) => readRecords<Rec>(dir)

/** Whether the process whose pid a test's agent wrote to `file` still runs. */
function isAliveFromFile(file: string): boolean {
  return isAlive(Number(readFileSync(file, 'utf8')))
}

/** Kills a process that a test's agent left behind (its pid was written to `file`). */
function killLeftover(file: string): void {
  try {
    process.kill(Number(readFileSync(file, 'utf8')), 'SIGKILL')
  } catch {}
}

describe('foreground signals', () => {
  test("Ctrl-\\ (SIGQUIT) in an interactive run: harness records the agent's death, then dies of it too", async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { sleepMs: 60_000 })
    const out = join(repo.home, 'quit.out')
    await tmux.start(
      'quit',
      `cd ${shellQuote(repo.dir)}\n${H} run -a claude task; echo "exit $?" > ${shellQuote(out)}\nsleep 60`,
      agents.env,
    )
    const started = await waitFor('the agent to start', () => agents.starts()[0])
    expect(started.stdin_tty).toBe(true)
    tmux.sendKeys('quit', 'C-\\')
    await waitFor('harness to exit', () => existsSync(out))
    tmux.killSession('quit')
    // Read from disk, not through harness: a reading command would reconcile a stale RUNNING record.
    const [record] = records(repo.dir)
    expect(record).toMatchObject({ status: 'FAILED', exit_code: 131, stop_reason: 'signal' })
    expect(record?.runs[0]).toMatchObject({ signal: 'SIGQUIT', exit_code: null })
    expect(readFileSync(out, 'utf8')).toBe('exit 131\n')
    expect(isAlive(started.pid)).toBe(false)
  })

  test('SIGINT after the record is committed but before the agent starts: no RUNNING record, no agent', async () => {
    const { dir, env, home } = tmpPlainDir()
    const agents = fakeAgents(home, env)
    const sessions = join(dir, '.harness', 'sessions')
    mkdirSync(sessions, { recursive: true })
    // Holding the record's lock keeps harness between "about to commit the run" and "agent started".
    const lock = await FileLock.acquire(join(sessions, 'pre-spawn.lock'))
    const child = spawn(
      HARNESS_BIN,
      ['run', '-a', 'claude', '--no-worktree', '--session-id', 'pre-spawn', 'x'],
      { cwd: dir, env: agents.env, stdio: 'ignore' },
    )
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    )
    try {
      // Each attempt at the lock makes a temporary file named after harness's pid: it is waiting to commit.
      // Each attempt's temporary file has a name of its own (several events each: made, written, removed).
      const attempts = new Set<string>()
      let wake: (() => void) | undefined
      const watcher = watch(sessions, (_event, name) => {
        if (!name?.startsWith(`pre-spawn.lock.${child.pid}.`) || !name.endsWith('.tmp')) return
        attempts.add(name)
        wake?.()
      })
      const attempted = (n: number) =>
        new Promise<void>((resolve) => {
          const target = attempts.size + n
          wake = () => {
            if (attempts.size >= target) resolve()
          }
          wake()
        })
      try {
        await attempted(1)
        child.kill('SIGINT')
        // An attempt after the kill means harness ran again since (the signal was delivered); one more, that its
        // event loop went round, past the handler: no fixed wait, however busy the machine.
        await attempted(2)
      } finally {
        watcher.close()
      }
    } finally {
      lock.release()
    }
    const [code, signal] = await exited
    expect(signal ?? code).toBe('SIGINT')
    expect(agents.starts()).toHaveLength(0)
    const found = records(dir)
    expect(found.map((r) => r.status)).not.toContain('RUNNING')
    expect(found).toEqual([
      expect.objectContaining({
        id: 'pre-spawn',
        status: 'PAUSED',
        stop_reason: 'interrupt',
        exit_code: 130,
      }),
    ])
  })

  test('Ctrl-C in a headless foreground run (SIGINT to its process group): PAUSED "interrupt", dies of SIGINT; wait 130; resume works', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { onSigint: true, sleepMs: 60_000 })
    // Its own process group, as a shell gives a foreground job: the terminal's Ctrl-C goes to the whole group.
    const child = spawn(HARNESS_BIN, ['run', '-a', 'claude', '--session-id', 'ctrl-c', 'task'], {
      cwd: repo.dir,
      env: agents.env,
      stdio: 'ignore',
      detached: true,
    })
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    )
    await waitFor('the agent to start', () => agents.starts()[0])
    process.kill(-(child.pid as number), 'SIGINT')
    const [code, signal] = await exited
    expect(signal ?? code).toBe('SIGINT')
    expect(agents.entries().filter((e) => e.event === 'sigint')).toHaveLength(1)
    expect(records(repo.dir)[0]).toMatchObject({ status: 'PAUSED', stop_reason: 'interrupt', exit_code: 130 })
    const wait = await cli(['session', 'wait', 'ctrl-c'], { cwd: repo.dir, env: agents.env })
    expect(wait.exitCode).toBe(130)
    const resume = await cli(['session', 'resume', 'ctrl-c', '--json', 'go on'], {
      cwd: repo.dir,
      env: { ...agents.env, FAKE_AGENT_SLEEP_MS: '0' },
    })
    expect(resume.exitCode, resume.stderr).toBe(0)
    expect(json<Rec>(resume)).toMatchObject({ status: 'COMPLETED', exit_code: 0, stop_reason: 'exited' })
  })

  test('SIGTERM to a foreground harness with no stop request: the agent is stopped, PAUSED "terminated", exit 143; wait 143', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { sleepMs: 60_000 })
    const child = spawn(HARNESS_BIN, ['run', '-a', 'codex', '--session-id', 'term', 'task'], {
      cwd: repo.dir,
      env: agents.env,
      stdio: 'ignore',
    })
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    )
    const started = await waitFor('the agent to start', () => agents.starts()[0])
    child.kill('SIGTERM')
    const [code, signal] = await exited
    expect(code ?? signal).toBe(143)
    expect(isAlive(started.pid)).toBe(false)
    expect(records(repo.dir)[0]).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'terminated',
      exit_code: 143,
    })
    const wait = await cli(['session', 'wait', 'term'], { cwd: repo.dir, env: agents.env })
    expect(wait.exitCode).toBe(143)
  })

  test("a headless run exits with the agent's code at once, though a process it left behind holds its output", async () => {
    const { dir, env } = tmpPlainDir()
    const left = join(dir, 'left.pid')
    const script = `sleep 30 & echo $! > ${shellQuote(left)}; echo agent-output; exit 3`
    const run = await cli(['run', '-a', 'exec', '--json', '--', 'sh', '-c', script], { cwd: dir, env })
    // The leftover still holds the output pipe, yet harness has already exited with the agent's code.
    expect(isAliveFromFile(left)).toBe(true)
    killLeftover(left)
    expect(run.exitCode, run.stderr).toBe(3)
    const record = json<Rec>(run)
    expect(record).toMatchObject({ status: 'FAILED', exit_code: 3 })
    expect(run.stderr).toContain('agent-output')
    expect(readFileSync(join(dir, '.harness', 'logs', `${record.id}.log`), 'utf8')).toContain('agent-output')
  })

  test('a worktree.setup that leaves a process behind does not hold the run', async () => {
    const repo = tmpGitRepo()
    const left = join(repo.home, 'left.pid')
    mkdirSync(join(repo.dir, '.harness'), { recursive: true })
    writeProjectConfig(repo.dir, repo.env, {
      worktree: { setup: `sleep 30 & echo $! > ${shellQuote(left)}; echo set up` },
    })
    const agents = fakeAgents(repo.home, repo.env)
    // The binary: that its process exits (nothing holds it) is the point.
    const run = await cli(['run', '-a', 'claude', '--json', 'task'], {
      cwd: repo.dir,
      env: agents.env,
      process: true,
    })
    // The setup's leftover still runs, yet the run has already ended.
    expect(isAliveFromFile(left)).toBe(true)
    killLeftover(left)
    expect(run.exitCode, run.stderr).toBe(0)
    expect(json<Rec>(run).status).toBe('COMPLETED')
  })

  test('Ctrl-\\ (SIGQUIT) during worktree.setup aborts cleanly like Ctrl-C: no worktree, no record, no setup left', async () => {
    const repo = tmpGitRepo()
    const marker = join(repo.home, 'setup-started')
    const left = join(repo.home, 'setup.pid')
    mkdirSync(join(repo.dir, '.harness'), { recursive: true })
    writeProjectConfig(repo.dir, repo.env, {
      worktree: { setup: `echo $$ > ${shellQuote(left)}; touch ${shellQuote(marker)}; sleep 30` },
    })
    const agents = fakeAgents(repo.home, repo.env)
    const { child, exited } = backgroundRun(repo.dir, agents.env)
    await waitFor('the setup to start', () => existsSync(marker))
    child.kill('SIGQUIT')
    const [code, signal] = await exited
    const setupPid = Number(readFileSync(left, 'utf8'))
    const setupAlive = isAlive(setupPid)
    killLeftover(left)
    expect(signal ?? code).toBe('SIGQUIT')
    expect(setupAlive).toBe(false)
    expect(agents.starts()).toHaveLength(0)
    expect(records(repo.dir)).toEqual([])
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
    expect(repo.git('worktree', 'list').split('\n')).toHaveLength(1)
  })

  test('Ctrl-C during worktree.setup leaves nothing it started, not even a child that ignores SIGTERM', async () => {
    const repo = tmpGitRepo()
    const marker = join(repo.home, 'setup-started')
    const left = join(repo.home, 'stubborn.pid')
    mkdirSync(join(repo.dir, '.harness'), { recursive: true })
    const setup = `(trap "" TERM; exec sleep 30) & echo $! > ${shellQuote(left)}; touch ${shellQuote(marker)}; wait`
    writeProjectConfig(repo.dir, repo.env, { worktree: { setup } })
    const agents = fakeAgents(repo.home, repo.env)
    const { child, exited } = backgroundRun(repo.dir, agents.env)
    await waitFor('the setup to start', () => existsSync(marker))
    child.kill('SIGINT')
    const [code, signal] = await exited
    const stubborn = Number(readFileSync(left, 'utf8'))
    const survived = isAlive(stubborn)
    killLeftover(left)
    expect(signal ?? code).toBe('SIGINT')
    expect(survived).toBe(false)
    expect(records(repo.dir)).toEqual([])
    expect(repo.git('worktree', 'list').split('\n')).toHaveLength(1)
  })
})

/** A foreground `harness run` of claude in `dir`, started in the background, with the promise of its exit. */
function backgroundRun(dir: string, env: NodeJS.ProcessEnv) {
  const child = spawn(HARNESS_BIN, ['run', '-a', 'claude', 'task'], { cwd: dir, env, stdio: 'ignore' })
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  )
  return { child, exited }
}
