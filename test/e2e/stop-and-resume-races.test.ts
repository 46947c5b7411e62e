import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { exitOf } from '../helpers/processes.js'
import { readRecord, writeRecord } from '../helpers/sessions.js'
import { projectEnv, type TmpRepo, tmpGitRepo, tmpPlainDir } from '../helpers/tmp.js'
import { shellQuote, waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; status: string; runs: Rec[] }

/** An environment whose `git` runs `prelude` (sh, with "$*" the arguments) before the real one. */
function wrappedGit(repo: TmpRepo, prelude: string): NodeJS.ProcessEnv {
  const gitBin = join(repo.home, 'gitbin')
  mkdirSync(gitBin)
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
  writeFileSync(join(gitBin, 'git'), `#!/bin/sh\n${prelude}\nexec ${shellQuote(realGit)} "$@"\n`, {
    mode: 0o755,
  })
  return { ...repo.env, PATH: `${gitBin}:${repo.env.PATH}` }
}

/**
 * A `git` that plays a race the same way every time: the first `git <command>` waits (up to 1.5 s) until a
 * second one arrives, which then starts 0.3 s after it.
 */
function racingGit(repo: TmpRepo, command: string): NodeJS.ProcessEnv {
  const barrier = join(repo.home, 'barrier')
  mkdirSync(barrier)
  const env = wrappedGit(
    repo,
    // Matched after harness's own `-c key=value` options too.
    `case "$*" in
"${command}"* | *" ${command}"*)
  if mkdir "$BARRIER/first" 2>/dev/null; then
    i=0
    while [ ! -d "$BARRIER/second" ] && [ $i -lt 30 ]; do sleep 0.05; i=$((i + 1)); done
  else
    mkdir "$BARRIER/second"
    sleep 0.3
  fi
  ;;
esac`,
  )
  return { ...env, BARRIER: barrier }
}

describe('stop requests and resumes', () => {
  test('a kill in flight never stops the run a resume started after its own run ended', async () => {
    const { dir, env } = tmpPlainDir()
    // The first run ignores SIGTERM, so the kill waits out its grace period; the resumed one does not.
    const script = 'if [ -z "$SECOND_RUN" ]; then trap "" TERM; fi; sleep 60'
    const run = await cli(['run', '-a', 'exec', '--detach', '--json', '--', 'sh', '-c', script], {
      cwd: dir,
      env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id, pid: firstAgent } = json<Rec>(run)
    const kill = spawn(HARNESS_BIN, ['session', 'kill', id, '--grace', '30s'], {
      cwd: dir,
      env,
      stdio: 'ignore',
    })
    const killed = exitOf(kill)
    try {
      await waitFor('the stop request', () => readRecord<Rec>(dir, id).stop_request)
      await new Promise((resolve) => setTimeout(resolve, 300))
      // The kill command is now waiting for the supervisor; freeze it there.
      kill.kill('SIGSTOP')
      // Run 1 ends (its supervisor records KILLED: the request was committed first), and the session is resumed.
      process.kill(-(firstAgent as number), 'SIGKILL')
      await waitFor('run 1 to end', () => readRecord<Rec>(dir, id).status === 'KILLED')
      const resumed = await cli(['session', 'resume', id, '--detach', '--json'], {
        cwd: dir,
        env: { ...env, SECOND_RUN: '1' },
      })
      expect(resumed.exitCode, resumed.stderr).toBe(0)
      const secondAgent = json<Rec>(resumed).pid as number
      expect(isAlive(secondAgent)).toBe(true)
      kill.kill('SIGCONT')
      const { code } = await killed
      expect(code).toBe(4)
      // Left alone: the kill signalled nothing of run 2 and committed no request for it.
      expect(isAlive(secondAgent)).toBe(true)
      const record = readRecord<Rec>(dir, id)
      expect(record.stop_request ?? null).toBeNull()
      expect(record.status).toBe('RUNNING')
      expect(record.runs).toHaveLength(2)
      expect(record.runs[1]?.ended_at ?? null).toBeNull()
      const stop = await cli(['session', 'kill', id], { cwd: dir, env })
      expect(stop.exitCode, stop.stderr).toBe(0)
    } finally {
      kill.kill('SIGCONT')
      kill.kill('SIGKILL')
    }
  })

  test('two resumes racing to recreate a removed worktree: one runs in it, the other exits 4', async () => {
    const repo = tmpGitRepo()
    const first = await cli(['run', '-a', 'exec', '--json', '--', 'sh', '-c', 'test -f README.md'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(first.exitCode, first.stderr).toBe(0)
    const { id, worktree_dir } = json<Rec>(first)
    repo.git('worktree', 'remove', '--force', worktree_dir as string)
    const env = racingGit(repo, 'worktree add')
    const both = await Promise.all(
      // Two processes: each its own pid behind its lock.
      [0, 1].map(() => cli(['session', 'resume', id, '--json'], { cwd: repo.dir, env, process: true })),
    )
    const codes = both.map((r) => r.exitCode).sort()
    expect(codes, both.map((r) => r.stderr).join('\n')).toEqual([0, 4])
    const winner = both.find((r) => r.exitCode === 0)
    expect(json<Rec>(winner as never)).toMatchObject({ status: 'COMPLETED', exit_code: 0 })
    expect(existsSync(join(worktree_dir as string, 'README.md'))).toBe(true)
    expect(repo.git('worktree', 'list')).toContain(worktree_dir as string)
  })

  test('two runs racing with one --session-id: one runs in its worktree, the other exits 4', async () => {
    const repo = tmpGitRepo()
    const env = racingGit(repo, 'update-ref')
    const script = 'sleep 0.5; test -f README.md'
    const both = await Promise.all(
      [0, 1].map(() =>
        // Two processes: each its own pid behind its lock.
        cli(['run', '-a', 'exec', '--json', '--session-id', 'same', '--', 'sh', '-c', script], {
          cwd: repo.dir,
          env,
          process: true,
        }),
      ),
    )
    const codes = both.map((r) => r.exitCode).sort()
    expect(codes, both.map((r) => r.stderr).join('\n')).toEqual([0, 4])
    const winner = json<Rec>(both.find((r) => r.exitCode === 0) as never)
    expect(winner).toMatchObject({ id: 'same', status: 'COMPLETED', exit_code: 0 })
    expect(existsSync(join(winner.worktree_dir as string, 'README.md'))).toBe(true)
  })

  test('logs -f stops following once its reader is gone', async () => {
    const { dir, env } = tmpPlainDir()
    const run = await cli(
      ['run', '-a', 'exec', '--detach', '--', 'sh', '-c', 'while true; do echo tick; sleep 0.1; done'],
      { cwd: dir, env },
    )
    const id = run.stdout.trim()
    try {
      const follow = spawn(HARNESS_BIN, ['session', 'logs', '-f', id], {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'ignore'],
      })
      const exited = exitOf(follow)
      // Like `| head -1`: read the first chunk, then close the pipe.
      await new Promise((resolve) => follow.stdout?.once('data', resolve))
      follow.stdout?.destroy()
      // A ceiling for the failure only (a follow that never notices): a slow machine just takes longer.
      const timer = setTimeout(() => follow.kill('SIGKILL'), 60_000)
      const { signal } = await exited
      clearTimeout(timer)
      expect(signal).toBeNull()
    } finally {
      await cli(['session', 'kill', id, '--grace', '200ms'], { cwd: dir, env })
    }
  })

  test('resuming a record an older tool wrote (no runs) adds a run of kind "resume"', async () => {
    const { dir, env, home } = tmpPlainDir()
    const agents = fakeAgents(home, env)
    const sessions = join(dir, '.harness', 'sessions')
    mkdirSync(sessions, { recursive: true })
    const legacy = {
      id: 'legacy01',
      provider: 'claude',
      permission: 'supervised',
      status: 'COMPLETED',
      worktree_dir: dir,
      is_worktree: false,
      pid: 4242,
      exit_code: 0,
      prompt: 'old task',
      created_at: '2025-01-01T10:00:00Z',
      updated_at: '2025-01-01T10:30:00Z',
      completed_at: '2025-01-01T10:30:00Z',
    }
    writeRecord(dir, projectEnv(dir), legacy)
    const resumed = await cli(['session', 'resume', 'legacy01', '--json', 'go on'], {
      cwd: dir,
      env: agents.env,
    })
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    const record = json<Rec>(resumed)
    expect(record.status).toBe('COMPLETED')
    expect(record.runs).toEqual([expect.objectContaining({ n: 1, kind: 'resume' })])
  })

  test('kill waits for a supervisor still recording the outcome (slow files_modified) rather than record over it', async () => {
    const repo = tmpGitRepo()
    // Hashing a large worktree for files_modified: 6.5 s, longer than the kill's grace + 5 s margin.
    const env = wrappedGit(repo, 'case "$*" in "add -A"*) sleep 6.5 ;; esac')
    const run = await cli(['run', '-a', 'exec', '--detach', '--json', '--', 'sleep', '60'], {
      cwd: repo.dir,
      env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id } = json<Rec>(run)
    const kill = await cli(['session', 'kill', id, '--grace', '200ms'], { cwd: repo.dir, env: repo.env })
    expect(kill.exitCode, kill.stderr).toBe(0)
    const record = readRecord<Rec>(repo.dir, id)
    expect(record).toMatchObject({ status: 'KILLED', exit_code: 143, files_modified: [] })
    expect(record.runs[0]).toMatchObject({ signal: 'SIGTERM', exit_code: null })
  })

  test('resuming a session whose worktree and branch are both gone: exit 4 naming the session, record untouched', async () => {
    const repo = tmpGitRepo()
    const first = await cli(['run', '-a', 'exec', '--json', '--branch', 'topic/x', '--', 'true'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(first.exitCode, first.stderr).toBe(0)
    const { id, worktree_dir } = json<Rec>(first)
    repo.git('worktree', 'remove', '--force', worktree_dir as string)
    repo.git('branch', '-D', 'topic/x')
    const before = readFileSync(join(repo.dir, '.harness', 'sessions', `${id}.json`), 'utf8')
    const resumed = await cli(['session', 'resume', id, '--json'], { cwd: repo.dir, env: repo.env })
    expect(resumed.exitCode).toBe(4)
    expect(resumed.stdout).toBe('')
    const { error } = JSON.parse(resumed.stderr) as { error: { code: string; message: string; hint: string } }
    expect(error.code).toBe('BRANCH_MISSING')
    expect(error.message).toContain(`session "${id}"`)
    expect(error.message).toContain('topic/x')
    expect(error.hint).toContain(`refs/harness/${id}/`)
    expect(readFileSync(join(repo.dir, '.harness', 'sessions', `${id}.json`), 'utf8')).toBe(before)
    expect(existsSync(worktree_dir as string)).toBe(false)
  })

  test('a resume racing a delete ends with exit 3 or 4, never 5 ("invalid reference")', async () => {
    const repo = tmpGitRepo()
    const first = await cli(['run', '-a', 'exec', '--json', '--', 'true'], { cwd: repo.dir, env: repo.env })
    expect(first.exitCode, first.stderr).toBe(0)
    const { id, worktree_dir } = json<Rec>(first)
    repo.git('worktree', 'remove', '--force', worktree_dir as string)
    // The resume's `git worktree add` (recreating the worktree from the branch) waits at a gate, and the
    // delete removes the branch and the record meanwhile: the race played the same way every time.
    const gate = join(repo.home, 'gate')
    const reached = join(repo.home, 'reached')
    const env = wrappedGit(
      repo,
      `case "$*" in *"worktree add"*) : > '${reached}'; while [ ! -e '${gate}' ]; do sleep 0.02; done ;; esac`,
    )
    const resume = spawn(HARNESS_BIN, ['--json', 'session', 'resume', id], {
      cwd: repo.dir,
      env,
      stdio: 'pipe',
    })
    let stderr = ''
    resume.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const resumed = exitOf(resume)
    await waitFor('the resume to reach git worktree add', () => existsSync(reached))
    const del = await cli(['session', 'delete', id, '--force'], { cwd: repo.dir, env: repo.env })
    expect(del.exitCode, del.stderr).toBe(0)
    writeFileSync(gate, '')
    const { code } = await resumed
    expect([3, 4], stderr).toContain(code)
    expect(stderr).not.toContain('invalid reference')
    expect(existsSync(join(repo.dir, '.harness', 'sessions', `${id}.json`))).toBe(false)
  })
})
