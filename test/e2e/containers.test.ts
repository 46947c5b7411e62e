import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { containerRunning, sessionContainers, TEST_IMAGE, usableEngine } from '../helpers/containers.js'
import { runsWith, tmuxMissing } from '../helpers/require.js'
import { readRecord } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

// Sessions in containers (SPEC §14, docs/backends.md) on the real engine; built from this machine's binaries.
const usable = usableEngine()
const runs = runsWith('podman', 'container tests', usable.engine ? undefined : usable.why)

interface Record {
  id: string
  status: string
  exit_code: number | null
  git_branch: string
  worktree_dir: string
  backend?: string
  container?: { id: string; created: string; env: string[]; collected?: { kind: string; commits?: number } }
  runs: { args: string[] }[]
}

const GIT_NAMES = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']

/** A repository whose user config sends sessions into the test image, with the named variables passed in. */
function containerRepo(extraEnv: string[] = []): TmpRepo {
  const repo = tmpGitRepo()
  const configDir = join(repo.home, '.config', 'harness')
  mkdirSync(configDir, { recursive: true })
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify({
      backend: 'container',
      container: { image: TEST_IMAGE, env: [...GIT_NAMES, ...extraEnv] },
    }),
  )
  return repo
}

test('without a usable engine, --backend container is exit 5 naming it, and nothing is left behind', async () => {
  const repo = containerRepo()
  // A PATH with node and git only: no podman, no docker.
  const bin = join(repo.home, 'bin-no-engine')
  mkdirSync(bin)
  for (const tool of ['node', 'git', 'sh']) {
    symlinkSync(
      execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(),
      join(bin, tool),
    )
  }
  const env = { ...repo.env, PATH: bin }
  const run = await cli(['run', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env, process: true })
  expect(run.exitCode).toBe(5)
  expect(run.stderr).toContain('no container engine found on PATH (looked for podman, then docker)')
  const chosen = await cli(['run', '--engine', 'docker', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env })
  expect(chosen.exitCode).toBe(5)
  expect(chosen.stderr).toContain('container engine "docker" not found on PATH')
  expect(existsSync(join(repo.dir, '.harness', 'worktrees'))).toBe(false)
  expect(repo.git('branch', '--list', 'harness/*')).toBe('')
  // Everything else keeps working: a local run in the same project.
  const local = await cli(['run', '--backend', 'local', '-a', 'exec', '--', 'sh', '-c', 'exit 0'], {
    cwd: repo.dir,
    env,
  })
  expect(local.exitCode).toBe(0)
})

describe.skipIf(!runs)('container backend (podman)', () => {
  test('doctor reports the engine, its version and a test container', async () => {
    const repo = containerRepo()
    const doctor = await cli(['doctor', '--json'], { cwd: repo.dir, env: repo.env })
    const report = json<{ checks: { name: string; status: string; detail: string }[] }>(doctor)
    const check = report.checks.find((c) => c.name === 'container engine')
    expect(check?.status).toBe('ok')
    expect(check?.detail).toMatch(/^podman \d+\.\d+/)
    expect(check?.detail).toContain(`a test container of ${TEST_IMAGE} started`)
  })

  const foreign: string[] = []
  afterAll(() => {
    for (const id of foreign) spawn('podman', ['rm', '--force', id], { stdio: 'ignore' })
  })

  test('a run: exit code and status, files in the worktree only, commits on its branch, .git untouchable, then cleanup', async () => {
    const repo = containerRepo(['SECRET_TOKEN'])
    const env = { ...repo.env, SECRET_TOKEN: 'tok-3f9a-value' }
    const mainBefore = repo.git('rev-parse', 'main')
    const configBefore = readFileSync(join(repo.dir, '.git', 'config'), 'utf8')
    const script = [
      'R=$(dirname "$HARNESS_DIR")',
      'echo "$SECRET_TOKEN" > token.txt',
      'echo committed > a.txt && git add a.txt && git commit -q -m "agent commit"',
      'echo uncommitted > b.txt',
      // Every way to reach the repository's own .git fails: it is read-only inside.
      'git -C "$R" config user.name evil; echo "[alias] x = !evil" >> "$R/.git/config"',
      'echo evil > "$R/.git/hooks/pre-commit"; git --git-dir="$R/.git" update-ref refs/heads/main HEAD',
      'echo evil > "$R/evil.txt"',
      'exit 3',
    ].join('\n')
    const run = await cli(['run', '--json', '-a', 'exec', '--', 'sh', '-c', script], { cwd: repo.dir, env })
    expect(run.exitCode).toBe(3)
    const record = json<Record>(run)
    expect(record.status).toBe('FAILED')
    expect(record.exit_code).toBe(3)
    expect(record.backend).toBe('container')
    expect(record.container?.id).toMatch(/^[0-9a-f]{64}$/)
    expect(record.container?.created).toBeTruthy()
    const wt = record.worktree_dir
    expect(readFileSync(join(wt, 'token.txt'), 'utf8')).toBe('tok-3f9a-value\n')
    expect(readFileSync(join(wt, 'b.txt'), 'utf8')).toBe('uncommitted\n')
    for (const file of ['a.txt', 'b.txt', 'token.txt', 'evil.txt'])
      expect(existsSync(join(repo.dir, file))).toBe(false)
    // The commit came back to harness/<id> (fast-forward); the uncommitted file stays, unstaged.
    expect(repo.git('log', '-1', '--format=%s', record.git_branch)).toBe('agent commit')
    expect(repo.git('-C', wt, 'status', '--porcelain')).toBe('?? b.txt\n?? token.txt'.trim())
    expect(record.container?.collected).toMatchObject({ kind: 'fast-forward', commits: 1 })
    // The host's refs, config and hooks are as they were.
    expect(repo.git('rev-parse', 'main')).toBe(mainBefore)
    expect(readFileSync(join(repo.dir, '.git', 'config'), 'utf8')).toBe(configBefore)
    expect(existsSync(join(repo.dir, '.git', 'hooks', 'pre-commit'))).toBe(false)
    // Only the names of the passed variables are kept; the value is in no record and no argv.
    expect(record.container?.env).toContain('SECRET_TOKEN')
    const stored = readFileSync(join(repo.dir, '.harness', 'sessions', `${record.id}.json`), 'utf8')
    expect(stored).not.toContain('tok-3f9a-value')
    expect(stored).toContain('SECRET_TOKEN')
    expect(sessionContainers(record.id)).toEqual([])

    const merge = await cli(['session', 'merge', record.id], { cwd: repo.dir, env })
    expect(merge.exitCode).toBe(0)
    expect(repo.git('show', 'main:a.txt')).toBe('committed')

    const cleanup = await cli(['session', 'cleanup', '--older-than', '0', '--force', '--json'], {
      cwd: repo.dir,
      env,
    })
    expect(cleanup.exitCode).toBe(0)
    expect(existsSync(wt)).toBe(false)
    expect(repo.git('branch', '--list', record.git_branch)).toBe('')
    expect(sessionContainers(record.id)).toEqual([])
  })

  test('kill of an agent that ignores SIGTERM leaves no container', async () => {
    const repo = containerRepo()
    const script = 'trap "" TERM; echo started > started.txt; sleep 600'
    const run = await cli(['run', '--detach', '--json', '-a', 'exec', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(run.exitCode).toBe(0)
    const { id, worktree_dir } = json<Record>(run)
    await waitFor('the agent to start', () => existsSync(join(worktree_dir, 'started.txt')))
    const containerId = readRecord<Record>(repo.dir, id).container?.id as string
    expect(containerRunning(containerId)).toBe(true)
    const kill = await cli(['session', 'kill', id, '--grace', '1s'], { cwd: repo.dir, env: repo.env })
    expect(kill.exitCode).toBe(0)
    expect(readRecord<Record>(repo.dir, id).status).toBe('KILLED')
    expect(containerRunning(containerId)).toBe(false)
    expect(sessionContainers(id)).toEqual([])
  })

  test('a detached run that ends by itself: once wait returns, its container is gone', async () => {
    const repo = containerRepo()
    const run = await cli(['run', '--detach', '--json', '-a', 'exec', '--', 'sh', '-c', 'sleep 2; exit 5'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id } = json<Record>(run)
    const wait = await cli(['session', 'wait', id], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(5)
    // Its supervisor removed the container before it wrote the outcome that wait saw.
    expect(sessionContainers(id)).toEqual([])
  })

  test('a foreground run killed from elsewhere: KILLED, and no container is left once kill or the run returns', async () => {
    const repo = containerRepo()
    const script = 'trap "" TERM; echo started > started.txt; sleep 600'
    const child = spawn(HARNESS_BIN, ['run', '-q', '-a', 'exec', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: repo.env,
      stdio: 'ignore',
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const worktrees = join(repo.dir, '.harness', 'worktrees')
    let id = ''
    await waitFor('the agent to start', () => {
      const [found] = existsSync(worktrees) ? readdirSync(worktrees) : []
      if (!found || !existsSync(join(worktrees, found, 'started.txt'))) return false
      id = found
      return true
    })
    const kill = await cli(['session', 'kill', id, '--grace', '1s'], { cwd: repo.dir, env: repo.env })
    expect(kill.exitCode, kill.stderr).toBe(0)
    // The supervisor (the foreground harness) removed its container before it wrote KILLED.
    expect(sessionContainers(id)).toEqual([])
    expect(await exited).not.toBe(0)
    expect(readRecord<Record>(repo.dir, id).status).toBe('KILLED')
    expect(sessionContainers(id)).toEqual([])
  })

  test('run --timeout: the container is stopped, PAUSED "timeout", wait 124, no container left; resume works', async () => {
    const repo = containerRepo()
    // The resumed run (the same command) ends at once: the file is there by then.
    const script = '[ -f again ] && exit 0; sleep 600'
    const run = await cli(
      ['run', '--detach', '--json', '--timeout', '2s', '-a', 'exec', '--', 'sh', '-c', script],
      {
        cwd: repo.dir,
        env: repo.env,
      },
    )
    expect(run.exitCode, run.stderr).toBe(0)
    const { id, worktree_dir } = json<Record>(run)
    const wait = await cli(['session', 'wait', id], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(124)
    expect(readRecord<Record>(repo.dir, id)).toMatchObject({ status: 'PAUSED', stop_reason: 'timeout' })
    expect(sessionContainers(id)).toEqual([])
    writeFileSync(join(worktree_dir, 'again'), '')
    const resume = await cli(['session', 'resume', id, '--json'], {
      cwd: repo.dir,
      env: repo.env,
      process: true,
    })
    expect(resume.exitCode, resume.stderr).toBe(0)
    expect(sessionContainers(id)).toEqual([])
  })

  test('a harness client killed with SIGKILL: wait, show and logs read the real exit code and change nothing; collect settles', async () => {
    const repo = containerRepo()
    const script =
      'echo started > started.txt; while [ ! -f go ]; do sleep 0.1; done; echo late > late.txt; ' +
      'git add late.txt && git commit -qm late; echo "the end"; exit 7'
    const child = spawn(HARNESS_BIN, ['run', '-a', 'exec', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: repo.env,
      stdio: 'ignore',
    })
    const sessions = join(repo.dir, '.harness', 'sessions')
    let id = ''
    await waitFor('the agent to start', () => {
      const worktrees = join(repo.dir, '.harness', 'worktrees')
      if (!existsSync(worktrees)) return false
      const [found] = readdirSync(worktrees)
      if (!found || !existsSync(join(worktrees, found, 'started.txt'))) return false
      id = found
      return existsSync(join(sessions, `${id}.json`))
    })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    child.kill('SIGKILL')
    await exited
    const record = readRecord<Record>(repo.dir, id)
    expect(record.status).toBe('RUNNING')
    const containerId = record.container?.id as string
    expect(containerRunning(containerId)).toBe(true)
    const recordBytes = readFileSync(join(sessions, `${id}.json`), 'utf8')
    const tip = repo.git('rev-parse', `refs/heads/harness/${id}`)
    writeFileSync(join(record.worktree_dir, 'go'), '')
    // Reading commands read (SPEC §4): the real exit code, nothing collected, written or removed.
    const wait = await cli(['session', 'wait', id], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(7)
    const show = json<Record & { unsettled?: boolean }>(
      await cli(['session', 'show', id, '--json'], { cwd: repo.dir, env: repo.env }),
    )
    expect(show).toMatchObject({ status: 'FAILED', exit_code: 7, unsettled: true })
    const list = await cli(['session', 'list'], { cwd: repo.dir, env: repo.env })
    expect(list.stdout).toContain('FAILED (to collect)')
    const logs = await cli(['session', 'logs', id], { cwd: repo.dir, env: repo.env })
    expect(logs.exitCode).toBe(0)
    expect(readFileSync(join(sessions, `${id}.json`), 'utf8')).toBe(recordBytes)
    expect(repo.git('rev-parse', `refs/heads/harness/${id}`)).toBe(tip)
    expect(sessionContainers(id).map((short) => containerId.startsWith(short))).toEqual([true])
    // collect settles it: the commit on its branch, the outcome recorded, the container gone.
    const collect = await cli(['session', 'collect', id, '--json'], { cwd: repo.dir, env: repo.env })
    expect(collect.exitCode, collect.stderr).toBe(0)
    expect(json(collect)).toEqual([{ id, outcome: 'settled', status: 'FAILED', exit_code: 7 }])
    const after = readRecord<Record>(repo.dir, id)
    expect(after.status).toBe('FAILED')
    expect(after.exit_code).toBe(7)
    expect(after.container?.collected).toMatchObject({ kind: 'fast-forward', commits: 1 })
    expect(repo.git('log', '-1', '--format=%s', `refs/heads/harness/${id}`)).toBe('late')
    expect(readFileSync(join(after.worktree_dir, 'late.txt'), 'utf8')).toBe('late\n')
    expect(sessionContainers(id)).toEqual([])
  })

  test('resume continues in a new container with the same agent files', async () => {
    const repo = containerRepo()
    const script =
      'if [ -f "$HOME/turn" ]; then cat "$HOME/turn" > resumed.txt; fi; echo "turn one" > "$HOME/turn"'
    const run = await cli(['run', '--json', '-a', 'exec', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(run.exitCode).toBe(0)
    const first = json<Record>(run)
    expect(existsSync(join(first.worktree_dir, 'resumed.txt'))).toBe(false)
    const resume = await cli(['session', 'resume', first.id, '--json'], { cwd: repo.dir, env: repo.env })
    expect(resume.exitCode).toBe(0)
    const second = json<Record>(resume)
    expect(second.status).toBe('COMPLETED')
    expect(second.container?.id).not.toBe(first.container?.id)
    expect(readFileSync(join(first.worktree_dir, 'resumed.txt'), 'utf8')).toBe('turn one\n')
    expect(sessionContainers(first.id)).toEqual([])
  })

  test.skipIf(!runs || !runsWith('tmux', 'the container test under --tmux', tmuxMissing()))(
    'an interactive agent in a container under --tmux: its screen in the pane, keys reach it',
    async () => {
      const repo = containerRepo()
      const socket = `harness-test-${process.pid}-ctr`
      const env = { ...repo.env, HARNESS_TMUX_SOCKET: socket }
      try {
        const script = 'echo ready-in-container; read line; echo "got $line" > got.txt'
        const run = await cli(['run', '--tmux', '--json', '-a', 'exec', '--', 'sh', '-c', script], {
          cwd: repo.dir,
          env,
        })
        expect(run.exitCode).toBe(0)
        const { id } = json<Record>(run)
        const pane = () =>
          execFileSync('tmux', ['-L', socket, 'capture-pane', '-p', '-t', `harness-${id}`], {
            encoding: 'utf8',
          })
        await waitFor('the container to draw in the pane', () => pane().includes('ready-in-container'))
        execFileSync('tmux', ['-L', socket, 'send-keys', '-t', `harness-${id}`, 'typed', 'Enter'])
        const wait = await cli(['session', 'wait', id], { cwd: repo.dir, env })
        expect(wait.exitCode).toBe(0)
        const record = readRecord<Record>(repo.dir, id)
        expect(record.status).toBe('COMPLETED')
        expect(readFileSync(join(record.worktree_dir, 'got.txt'), 'utf8')).toBe('got typed\n')
        expect(sessionContainers(id)).toEqual([])
      } finally {
        try {
          execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' })
        } catch {}
      }
    },
  )

  test('a forged record naming a foreign container is never stopped', async () => {
    const repo = containerRepo()
    const run = await cli(['run', '--json', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env: repo.env })
    const real = json<Record & { seal?: string }>(run)
    const started = spawn('podman', ['run', '--detach', '--network=none', TEST_IMAGE, 'sleep', '600'])
    const containerId = await new Promise<string>((resolve) => {
      let out = ''
      started.stdout.on('data', (chunk) => {
        out += chunk
      })
      started.on('close', () => resolve(out.trim()))
    })
    foreign.push(containerId)
    const created = JSON.parse(
      execFileSync('podman', ['inspect', '--type', 'container', containerId], {
        encoding: 'utf8',
      }),
    )[0].Created as string
    const forged: Record & { seal?: string } = {
      ...real,
      id: 'forged01',
      status: 'RUNNING',
      exit_code: null,
      container: { ...(real.container as NonNullable<Record['container']>), id: containerId, created },
    }
    delete forged.seal
    writeFileSync(join(repo.dir, '.harness', 'sessions', 'forged01.json'), JSON.stringify(forged))
    const kill = await cli(['session', 'kill', 'forged01', '--grace', '0s'], { cwd: repo.dir, env: repo.env })
    expect(kill.exitCode).toBe(4)
    const wait = await cli(['session', 'wait', 'forged01', '--timeout', '1s'], {
      cwd: repo.dir,
      env: repo.env,
    })
    // Whether the forged record is still RUNNING (its copied supervisor pid alive: the in-worker run's is the
    // test worker) or reconciled PAUSED (that process gone: the record is stale), wait never touches the
    // container: it times out (124) or reports PAUSED (4).
    expect([4, 124]).toContain(wait.exitCode)
    expect(containerRunning(containerId)).toBe(true)
  })
})
