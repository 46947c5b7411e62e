import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { sealRecord, sessionRecord } from '../fixtures/records.js'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { bystanders, startTime } from '../helpers/processes.js'
import { isolatedEnv, tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote } from '../helpers/tmux.js'

/**
 * Verified records (SPEC §10, "By construction"; docs/security.md, "Verified records"): a record is acted on
 * only when its seal verifies under the user's key for this project's real path. A clone's record naming a tmux server
 * is never attached to; a record copied from another project, or sealed under another HOME's key, is foreign
 * and says why.
 */

const bystander = bystanders()
const servers: string[] = []
afterAll(() => {
  for (const socket of servers) {
    try {
      execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' })
    } catch {}
  }
})

/** Runs `argv` on a pseudo-terminal (script(1)), as a user at a terminal would; resolves with its exit. */
function onTerminal(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', argv.map(shellQuote).join(' '), '/dev/null'], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    // A generous ceiling: an attach that happened would hold the terminal until then.
    const ceiling = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('exit', (code) => {
      clearTimeout(ceiling)
      resolve({ code, output })
    })
  })
}

describe('attach', () => {
  test("a clone's record naming a tmux server is never attached to", async () => {
    const root = tmpDir()
    const home = join(root, 'home')
    mkdirSync(home)
    writeFileSync(join(home, '.gitconfig'), '[init]\n\tdefaultBranch = main\n')
    const env = isolatedEnv(home)
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
    // The attacker's tmux server (here: one the test starts), which the record names.
    const socket = join(root, 'evil.sock')
    servers.push(socket)
    execFileSync('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'evil', 'sleep 300'])
    const pid = bystander()
    const origin = join(root, 'origin')
    mkdirSync(join(origin, '.harness', 'sessions'), { recursive: true })
    git(origin, 'init', '-q')
    writeFileSync(join(origin, 'README.md'), 'project\n')
    writeFileSync(
      join(origin, '.harness', 'sessions', 'att00001.json'),
      JSON.stringify(
        sessionRecord('att00001', {
          status: 'RUNNING',
          worktree_dir: origin,
          is_worktree: false,
          base_dir: origin,
          pid,
          tmux_session: 'evil',
          tmux_socket: socket,
          completed_at: null,
          exit_code: null,
          runs: [
            {
              n: 1,
              kind: 'start',
              pid,
              pid_start_time: startTime(pid),
              started_at: new Date().toISOString(),
            },
          ],
        }),
      ),
    )
    git(origin, 'add', '-A')
    git(origin, 'add', '-f', '.harness')
    git(origin, 'commit', '-q', '-m', 'project')
    const clone = join(root, 'clone')
    git(root, 'clone', '-q', origin, clone)

    const attach = await onTerminal([HARNESS_BIN, 'session', 'attach', 'att00001'], clone, env)
    const clients = execFileSync('tmux', ['-S', socket, 'list-clients'], { encoding: 'utf8' })
    expect(clients).toBe('')
    expect(attach.code).toBe(4)
    expect(attach.output).toContain('session "att00001" is foreign (it carries no seal')
    expect(attach.output).toContain('never attaches to the tmux server it names')
    expect(isAlive(pid)).toBe(true)
  })
})

describe('seals cover the project and name their key', () => {
  test('a record copied from another project is foreign there, and is not resumed', async () => {
    const first = tmpGitRepo()
    const agents = fakeAgents(first.home, first.env)
    const run = await cli(['run', '-a', 'claude', '--no-worktree', '--json', 'a task'], {
      cwd: first.dir,
      env: agents.env,
    })
    expect(run.exitCode).toBe(0)
    const { id } = json<{ id: string }>(run)
    const mine = await cli(['--json', 'session', 'show', id], { cwd: first.dir, env: first.env })
    expect(json<{ sealed: boolean }>(mine).sealed).toBe(true)

    // The same user's record, committed with `git add -f` in one project and copied into another.
    const second = tmpGitRepo()
    const sessions = join(second.dir, '.harness', 'sessions')
    mkdirSync(sessions, { recursive: true })
    copyFileSync(join(first.dir, '.harness', 'sessions', `${id}.json`), join(sessions, `${id}.json`))
    const env = { ...agents.env, HOME: first.env.HOME, XDG_STATE_HOME: first.env.XDG_STATE_HOME }
    const show = await cli(['--json', 'session', 'show', id], { cwd: second.dir, env })
    expect(json<{ sealed: boolean; seal_problem: string }>(show)).toMatchObject({
      sealed: false,
      seal_problem: 'other-project',
    })
    const starts = agents.starts().length
    const resume = await cli(['session', 'resume', id, 'go on'], { cwd: second.dir, env })
    expect(resume.exitCode).toBe(4)
    expect(resume.stderr).toContain('sealed for another project folder')
    expect(agents.starts()).toHaveLength(starts)
  })

  test("a record sealed under another HOME's key says so, and its process is not signalled", async () => {
    const repo = tmpGitRepo()
    const otherHome = join(repo.home, '..', 'other-home')
    mkdirSync(otherHome)
    const otherEnv = isolatedEnv(otherHome)
    const pid = bystander()
    const record = runningRecord('key00001', repo.dir, pid)
    mkdirSync(join(repo.dir, '.harness', 'sessions'), { recursive: true })
    writeFileSync(
      join(repo.dir, '.harness', 'sessions', 'key00001.json'),
      JSON.stringify(sealRecord(record, otherEnv, repo.dir)),
    )
    // This user has a key too (made by a session of their own), which differs from the other HOME's.
    const agents = fakeAgents(repo.home, repo.env)
    expect(
      (await cli(['run', '-a', 'claude', '--no-worktree', 'mine'], { cwd: repo.dir, env: agents.env }))
        .exitCode,
    ).toBe(0)

    const kill = await cli(['session', 'kill', 'key00001'], { cwd: repo.dir, env: repo.env })
    expect(kill.exitCode).toBe(4)
    expect(kill.stderr).toContain('sealed by another key: another HOME or user?')
    expect(kill.stderr).not.toContain('no process start times')
    expect(isAlive(pid)).toBe(true)
    const show = await cli(['--json', 'session', 'show', 'key00001'], { cwd: repo.dir, env: repo.env })
    expect(json<{ seal_problem: string }>(show).seal_problem).toBe('other-key')
  })
})

describe('wait', () => {
  test('wait on a shipped RUNNING record (foreign) is refused at once, exit 4, never blocking', async () => {
    const repo = tmpGitRepo()
    const pid = bystander()
    // A clone's record: RUNNING, naming a live process of this host with its true start time.
    const record = runningRecord('ship0001', repo.dir, pid)
    mkdirSync(join(repo.dir, '.harness', 'sessions'), { recursive: true })
    writeFileSync(join(repo.dir, '.harness', 'sessions', 'ship0001.json'), JSON.stringify(record))
    // The ceiling only bounds a wait that blocks (the old behaviour): the answer comes at once.
    const wait = await cli(['session', 'wait', 'ship0001'], {
      cwd: repo.dir,
      env: repo.env,
      timeoutMs: 60_000,
    })
    expect(wait.exitCode, wait.stderr).toBe(4)
    expect(wait.stderr).toContain('session "ship0001" is foreign')
    expect(wait.stderr).toContain('never waits on it')
    expect(wait.stderr).toContain('harness session adopt ship0001')
    const asJson = await cli(['--json', 'session', 'wait', 'ship0001'], {
      cwd: repo.dir,
      env: repo.env,
      timeoutMs: 60_000,
    })
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: 'FOREIGN', exit_code: 4 } })
    expect(isAlive(pid)).toBe(true)
  })
})

/** A RUNNING record of a session with no worktree in `dir`, naming the live process `pid` (its true start time). */
function runningRecord(id: string, dir: string, pid: number) {
  return sessionRecord(id, {
    status: 'RUNNING',
    worktree_dir: dir,
    is_worktree: false,
    base_dir: dir,
    pid,
    completed_at: null,
    exit_code: null,
    runs: [
      { n: 1, kind: 'start', pid, pid_start_time: startTime(pid), started_at: new Date().toISOString() },
    ],
  })
}
