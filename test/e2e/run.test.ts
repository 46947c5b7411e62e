import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { agentEnv, fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpGitRepo, tmpPlainDir } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; status: string; runs: Rec[] }

/** claude's headless form: print mode with the JSON event stream (docs/providers.md). */
const CLAUDE_HEADLESS = ['-p', '--output-format', 'stream-json', '--verbose']
/** The supervised level, passed explicitly (SPEC §6): headless, claude accepts edits. */
const SUPERVISED = ['--permission-mode', 'acceptEdits']

describe('harness run', () => {
  test('a foreground headless run in a new worktree: argv, cwd, env, record, exit code', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { exitCode: 0, output: 'agent says hi' })
    const sub = join(repo.dir, 'pkg', 'api')
    mkdirSync(sub, { recursive: true })
    repo.write('pkg/api/index.ts', 'export {}\n')
    repo.git('add', '-A')
    repo.git('commit', '-qm', 'pkg')
    // The built binary, as a user starts it (most runs in the suite run inside the test worker: helpers/cli.ts).
    const run = await cli(['run', '-a', 'claude', '--json', 'add', 'auth'], {
      cwd: sub,
      env: agents.env,
      process: true,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const record = json<Rec>(run)
    expect(record).toMatchObject({
      status: 'COMPLETED',
      exit_code: 0,
      provider: 'claude',
      permission: 'supervised',
      prompt: 'add auth',
      is_worktree: true,
      git_branch: `harness/${record.id}`,
      base_dir: repo.dir,
      base_commit: repo.git('rev-parse', 'HEAD'),
      task_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      agent_session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    })
    expect(record.id).toMatch(/^[0-9a-f]{8}$/)
    expect(record.worktree_dir).toBe(join(repo.dir, '.harness', 'worktrees', record.id))
    // The agent's output went to stderr (stdout is the record) and to the log.
    expect(run.stderr).toContain('agent says hi')
    const log = join(repo.dir, '.harness', 'logs', `${record.id}.log`)
    expect(readFileSync(log, 'utf8')).toContain('agent says hi')
    expect(statSync(log).mode & 0o777).toBe(0o600)
    const [start] = agents.starts()
    expect(start).toMatchObject({
      name: 'claude',
      cwd: join(record.worktree_dir as string, 'pkg', 'api'),
      session: record.id,
      harness_dir: join(repo.dir, '.harness'),
      stdin_tty: false,
    })
    expect(start?.args).toEqual([
      ...CLAUDE_HEADLESS,
      ...SUPERVISED,
      '--session-id',
      record.agent_session_id,
      'add auth',
    ])
    expect(record.runs).toHaveLength(1)
    expect(record.runs[0]).toMatchObject({ n: 1, kind: 'start', pid: start?.pid, exit_code: 0, signal: null })
    expect(record.runs[0]?.pid_start_time).toEqual(expect.any(String))
    expect(record.runs[0]?.supervisor_pid).toEqual(expect.any(Number))
    // .harness never shows up in git status, in the repository or in the worktree.
    expect(repo.git('status', '--porcelain')).toBe('')
    expect(repo.git('branch', '--list', `harness/${record.id}`)).toContain(`harness/${record.id}`)
  })

  test("exits with the agent's exit code and records FAILED", async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { exitCode: 7 })
    const run = await cli(['run', '-a', 'codex', 'do it'], { cwd: repo.dir, env: agents.env })
    expect(run.exitCode).toBe(7)
    expect(run.stderr).toMatch(/session [0-9a-f]{8} FAILED, exit 7/)
    const list = json<Rec[]>(await cli(['session', 'list', '--json'], { cwd: repo.dir, env: repo.env }))
    expect(list[0]).toMatchObject({ status: 'FAILED', exit_code: 7, stop_reason: 'exit-code' })
  })

  test('exec runs the command after --', async () => {
    const { dir, env } = tmpPlainDir()
    const run = await cli(
      ['run', '-a', 'exec', '--json', '--', 'sh', '-c', 'echo "$HARNESS_SESSION_ID"; exit 3'],
      {
        cwd: dir,
        env,
      },
    )
    expect(run.exitCode).toBe(3)
    const record = json<Rec>(run)
    expect(record).toMatchObject({ status: 'FAILED', exit_code: 3, is_worktree: false, worktree_dir: dir })
    expect(run.stderr).toContain(record.id)
    expect(run.stderr).toContain('not a git repository')
    const missing = await cli(['run', '-a', 'exec'], { cwd: dir, env })
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toContain('needs a command after --')
  })

  test('an agent that is not on PATH: exit 5, named, no record and no worktree left', async () => {
    const repo = tmpGitRepo()
    const env = { ...repo.env, PATH: '/usr/bin:/bin' }
    const run = await cli(['run', '-a', 'gemini', 'hello'], { cwd: repo.dir, env })
    expect(run.exitCode).toBe(5)
    expect(run.stderr).toContain('"gemini" is not installed or not on PATH')
    const list = await cli(['session', 'list', '--json'], { cwd: repo.dir, env })
    expect(json(list)).toEqual([])
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
    expect(repo.git('worktree', 'list').split('\n')).toHaveLength(1)
  })

  test('an existing branch is an error with a hint, never reused', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    repo.git('branch', 'feature')
    const run = await cli(['run', '-a', 'claude', '--branch', 'feature', 'x'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(run.exitCode).toBe(4)
    expect(run.stderr).toContain('branch "feature" already exists')
    expect(run.stderr).toContain('hint:')
    expect(agents.starts()).toHaveLength(0)
    expect(json(await cli(['session', 'list', '--json'], { cwd: repo.dir, env: repo.env }))).toEqual([])
  })

  test('--base, --branch, --no-worktree, --session-id', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const first = repo.git('rev-parse', 'HEAD')
    repo.write('later.txt', 'later\n')
    repo.git('add', '-A')
    repo.git('commit', '-qm', 'later')
    const based = json<Rec>(
      await cli(
        [
          'run',
          '-a',
          'claude',
          '--json',
          '--base',
          first,
          '--branch',
          'my/work',
          '--session-id',
          'my-task',
          'x',
        ],
        {
          cwd: repo.dir,
          env: agents.env,
        },
      ),
    )
    expect(based).toMatchObject({ id: 'my-task', git_branch: 'my/work', base_commit: first })
    expect(existsSync(join(based.worktree_dir as string, 'later.txt'))).toBe(false)
    const here = json<Rec>(
      await cli(['run', '-a', 'claude', '--json', '--no-worktree', 'y'], { cwd: repo.dir, env: agents.env }),
    )
    expect(here).toMatchObject({ is_worktree: false, worktree_dir: repo.dir, git_branch: null })
    const bad = await cli(['run', '-a', 'claude', '--session-id', '../x', 'y'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(bad.exitCode).toBe(2)
    const badBase = await cli(['run', '-a', 'claude', '--base', 'nope', 'y'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(badBase.exitCode).toBe(2)
    expect(badBase.stderr).toContain('nope')
  })

  test('run --session-id of an existing session resumes exactly that id', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const first = json<Rec>(
      await cli(['run', '-a', 'gemini', '--json', '--session-id', 'task-1', 'a'], {
        cwd: repo.dir,
        env: agents.env,
      }),
    )
    json<Rec>(
      await cli(['run', '-a', 'gemini', '--json', '--session-id', 'task-10', 'b'], {
        cwd: repo.dir,
        env: agents.env,
      }),
    )
    const again = await cli(['run', '--json', '--session-id', 'task-1', 'more'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(again.exitCode, again.stderr).toBe(0)
    const record = json<Rec>(again)
    expect(record).toMatchObject({ id: 'task-1', prompt: 'a', created_at: first.created_at })
    expect(record.runs.map((r) => r.kind)).toEqual(['start', 'resume'])
    expect(agents.starts()[2]?.args).toEqual([
      '--output-format',
      'stream-json',
      '--approval-mode',
      'auto_edit',
      '--skip-trust',
      '--resume',
      first.agent_session_id,
      '-p',
      'more',
    ])
    // An id is never a prefix here: "task", a prefix of both, is refused as a new id (it would take "task"
    // from them), naming them; one too short to be a prefix is a new session.
    const prefix = await cli(['run', '-a', 'gemini', '--json', '--session-id', 'task', 'c'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(prefix.exitCode).toBe(4)
    expect(JSON.parse(prefix.stderr).error.message).toContain('is a prefix of sessions task-1, task-10')
    const short = await cli(['run', '-a', 'gemini', '--json', '--session-id', 'tas', 'c'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(json<Rec>(short).id).toBe('tas')
  })

  test('git location variables inherited from a hook never redirect harness to another repository', async () => {
    const repo = tmpGitRepo()
    const other = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const env = {
      ...agents.env,
      GIT_DIR: join(other.dir, '.git'),
      GIT_WORK_TREE: other.dir,
      GIT_INDEX_FILE: join(other.dir, '.git', 'index'),
    }
    const run = await cli(['run', '-a', 'claude', '--json', 'task'], { cwd: repo.dir, env })
    expect(run.exitCode, run.stderr).toBe(0)
    const record = json<Rec>(run)
    expect(record).toMatchObject({ base_dir: repo.dir, is_worktree: true })
    expect(record.worktree_dir).toBe(join(repo.dir, '.harness', 'worktrees', record.id))
    expect(repo.git('branch', '--list', `harness/${record.id}`)).toContain(record.id)
    expect(other.git('branch', '--list', 'harness/*')).toBe('')
  })

  test('a repository with no commits: says so and runs in the current directory', async () => {
    const repo = tmpGitRepo({ commit: false })
    const agents = fakeAgents(repo.home, repo.env)
    const run = await cli(['run', '-a', 'claude', '--json', 'x'], { cwd: repo.dir, env: agents.env })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.stderr).toContain('no commits')
    expect(json<Rec>(run)).toMatchObject({ is_worktree: false, worktree_dir: repo.dir })
    expect(repo.git('status', '--porcelain')).toBe('')
  })
})

test('files_modified lists what the run changed against base_commit: committed, uncommitted, untracked', async () => {
  const repo = tmpGitRepo()
  repo.write('keep.txt', 'same\n')
  repo.write('edit.txt', 'before\n')
  repo.git('add', '-A')
  repo.git('commit', '-qm', 'files')
  const script = [
    'echo after > edit.txt',
    'echo new > committed.txt',
    'git add committed.txt',
    'git -c user.name=a -c user.email=a@b commit -qm agent',
    'echo loose > untracked.txt',
  ].join(' && ')
  const run = await cli(['run', '-a', 'exec', '--json', '--', 'sh', '-c', script], {
    cwd: repo.dir,
    env: repo.env,
  })
  expect(run.exitCode, run.stderr).toBe(0)
  expect(json<Rec>(run).files_modified).toEqual(['committed.txt', 'edit.txt', 'untracked.txt'])
})

describe('edges of run', () => {
  test('--session-id of an existing session refuses flags that would change it', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    await cli(['run', '-a', 'claude', '--session-id', 's1', 'a'], { cwd: repo.dir, env: agents.env })
    const changed = await cli(['run', '--session-id', 's1', '-a', 'codex', '-m', 'o3', 'b'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(changed.exitCode).toBe(2)
    expect(changed.stderr).toContain('--agent, --model cannot change it')
    expect(agents.starts()).toHaveLength(1)
  })

  test('worktrees are 0700; an exec command that is not executable is named as such (exit 5)', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const record = json<Rec>(
      await cli(['run', '-a', 'claude', '--json', 'a'], { cwd: repo.dir, env: agents.env }),
    )
    expect(statSync(record.worktree_dir as string).mode & 0o777).toBe(0o700)
    expect(statSync(join(repo.dir, '.harness', 'worktrees')).mode & 0o777).toBe(0o700)
    const notExec = await cli(['run', '-a', 'exec', '--', './README.md'], { cwd: repo.dir, env: agents.env })
    expect(notExec.exitCode).toBe(5)
    expect(notExec.stderr).toContain('"./README.md" is not an executable file')
  })

  test('--detach --json prints the record with its liveness; logs of an interactive-only session: exit 4', async () => {
    const { dir, env } = tmpPlainDir()
    const run = await cli(['run', '-a', 'exec', '--detach', '--json', '--', 'sleep', '5'], { cwd: dir, env })
    const record = json<Rec>(run)
    expect(record).toMatchObject({ status: 'RUNNING', liveness: 'running' })
    await cli(['session', 'kill', record.id], { cwd: dir, env })
    const { rmSync } = await import('node:fs')
    rmSync(join(dir, '.harness', 'logs', `${record.id}.log`))
    const logs = await cli(['session', 'logs', record.id], { cwd: dir, env })
    expect(logs.exitCode).toBe(4)
    expect(logs.stderr).toContain('has no log')
  })
})

describe('background runs, wait and logs', () => {
  test('--detach --json returns once the agent runs; wait exits with its code; logs show output', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, {
      sleepMs: 4000,
      exitCode: 3,
      output: 'background output',
    })
    const run = await cli(['run', '-a', 'claude', '--detach', '--json', 'fix lint'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    // It returned while the agent still runs (the agent sleeps 4 s): returning "at once" is measured by the bench.
    const record = json<Rec>(run)
    expect(record.status).toBe('RUNNING')
    expect(record.pid).toEqual(expect.any(Number))
    expect(isAlive(record.pid as number)).toBe(true)
    expect(record.runs[0]).toMatchObject({ detached: true, pid: record.pid })
    const shown = json<Rec>(
      await cli(['session', 'show', record.id, '--json'], { cwd: repo.dir, env: repo.env }),
    )
    expect(shown.liveness).toBe('running')

    const timeout = await cli(['session', 'wait', record.id, '--timeout', '100ms'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(timeout.exitCode).toBe(124)
    const wait = await cli(['session', 'wait', record.id], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(3)
    expect(wait.stdout).toContain('FAILED')
    const logs = await cli(['session', 'logs', record.id], { cwd: repo.dir, env: repo.env })
    // Each run starts with a header line (readable logs); --raw is the file as written.
    expect(logs.exitCode).toBe(0)
    expect(logs.stdout).toMatch(/^── run 1 · start · \S+ ──\nbackground output\n$/)
    const raw = await cli(['session', 'logs', '--raw', record.id], { cwd: repo.dir, env: repo.env })
    expect(raw).toMatchObject({ exitCode: 0, stdout: 'background output\n' })
    const [start] = agents.starts()
    expect(start?.args).toEqual([
      ...CLAUDE_HEADLESS,
      ...SUPERVISED,
      '--session-id',
      record.agent_session_id,
      'fix lint',
    ])
  })

  test('logs -f follows until the session ends', async () => {
    const { dir, env } = tmpPlainDir()
    const script = 'echo one; sleep 0.6; echo two; sleep 0.6; echo three'
    const run = await cli(['run', '-a', 'exec', '--detach', '--', 'sh', '-c', script], { cwd: dir, env })
    const id = run.stdout.trim()
    expect(id).toMatch(/^[0-9a-f]{8}$/)
    const follow = await cli(['session', 'logs', '-f', id], { cwd: dir, env })
    expect(follow.exitCode).toBe(0)
    expect(follow.stdout).toMatch(/^── run 1 · start · \S+ ──\none\ntwo\nthree\n$/)
  })
})

describe('kill and pause', () => {
  test('kill stops a stubborn agent and its grandchildren (SIGKILL after the grace period)', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { ignoreTerm: true, children: 2, sleepMs: 60_000 })
    const run = await cli(['run', '-a', 'claude', '--detach', '--json', 'task'], {
      cwd: repo.dir,
      env: agents.env,
    })
    const { id } = json<Rec>(run)
    // Wait for both grandchildren to report in.
    await waitFor(
      'both grandchildren',
      () => agents.entries().filter((e) => e.event === 'grandchild').length >= 2,
    )
    const pids = agents.pids()
    expect(pids).toHaveLength(3)
    const kill = await cli(['session', 'kill', id, '--grace', '1s'], { cwd: repo.dir, env: repo.env })
    expect(kill.exitCode, kill.stderr).toBe(0)
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false)
    const record = json<Rec>(await cli(['session', 'show', id, '--json'], { cwd: repo.dir, env: repo.env }))
    expect(record).toMatchObject({
      status: 'KILLED',
      stop_reason: 'killed',
      stop_request: { action: 'kill' },
    })
    const again = await cli(['session', 'kill', id], { cwd: repo.dir, env: repo.env })
    expect(again.exitCode).toBe(4)
    expect(again.stderr).toContain('KILLED')
  })

  test('pause records PAUSED; resume continues the conversation by id; resume refuses a live session', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { sleepMs: 60_000 })
    const run = json<Rec>(
      await cli(['run', '-a', 'claude', '--detach', '--json', 'long task'], {
        cwd: repo.dir,
        env: agents.env,
      }),
    )
    const refused = await cli(['session', 'resume', run.id], { cwd: repo.dir, env: agents.env })
    expect(refused.exitCode).toBe(4)
    expect(refused.stderr).toContain('still running')
    // `run --detach` returns once the record holds the agent's pid, which may be before the fixture has logged
    // its start: a pause before that would leave the resume's start as the only one.
    await waitFor('the first run to log its start', () => agents.starts().length >= 1, 60_000)
    const pause = await cli(['session', 'pause', run.id], { cwd: repo.dir, env: repo.env })
    expect(pause.exitCode, pause.stderr).toBe(0)
    const paused = json<Rec>(
      await cli(['session', 'show', run.id, '--json'], { cwd: repo.dir, env: repo.env }),
    )
    expect(paused).toMatchObject({ status: 'PAUSED', stop_reason: 'paused', exit_code: null })
    const wait = await cli(['session', 'wait', run.id], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(4)

    const resumeEnv = { ...agents.env, ...agentEnv({ sleepMs: 0, exitCode: 0 }) }
    const resumed = await cli(['session', 'resume', run.id.slice(0, 5), '--json'], {
      cwd: repo.dir,
      env: resumeEnv,
    })
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    const record = json<Rec>(resumed)
    expect(record).toMatchObject({ status: 'COMPLETED', prompt: 'long task', created_at: run.created_at })
    expect(record.runs.map((r) => r.kind)).toEqual(['start', 'resume'])
    const starts = agents.starts()
    expect(starts[1]?.args).toEqual([
      ...CLAUDE_HEADLESS,
      ...SUPERVISED,
      '--resume',
      run.agent_session_id,
      'continue',
    ])
    expect(starts[1]?.cwd).toBe(run.worktree_dir)
  })

  test('resume recreates a removed worktree from its branch', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const run = json<Rec>(
      await cli(['run', '-a', 'aider', '--json', 'first'], { cwd: repo.dir, env: agents.env }),
    )
    repo.git('worktree', 'remove', '--force', run.worktree_dir as string)
    expect(existsSync(run.worktree_dir as string)).toBe(false)
    const resumed = await cli(['session', 'resume', run.id, 'second', '--json'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain('recreated worktree')
    expect(existsSync(run.worktree_dir as string)).toBe(true)
    expect(agents.starts()[1]).toMatchObject({
      cwd: run.worktree_dir,
      args: [
        '--chat-history-file',
        join(repo.dir, '.harness', 'agents', run.id, 'aider.chat.md'),
        '--restore-chat-history',
        '--message',
        'second',
      ],
    })
  })
})
