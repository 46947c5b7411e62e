import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { commitStopRequest, stopRequest } from '../../src/sessions/control/stop.js'
import { RecordSealer } from '../../src/sessions/record/seal.js'
import { SessionStore } from '../../src/sessions/record/store.js'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { exitOf } from '../helpers/processes.js'
import { recordIfAny } from '../helpers/sessions.js'
import { tmpPlainDir } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

/*
 * Stops that survive their requester (docs/security.md): a `session kill` that dies after committing its
 * stop_request and before signalling anyone is still carried out, by the supervisor watching its record.
 * What such a kill leaves is made directly: its request (as `kill` builds it), committed the way `kill`
 * commits it, by a process that has exited, and no signal sent to anyone. No timing decides what the tests
 * see, and the product keeps no hook for them.
 */

type Rec = Record<string, unknown> & { id: string; status: string; runs: Rec[] }

function onlySession(dir: string): string | undefined {
  const sessions = join(dir, '.harness', 'sessions')
  if (!existsSync(sessions)) return undefined
  return readdirSync(sessions)
    .find((name) => name.endsWith('.json'))
    ?.slice(0, -'.json'.length)
}

/** What `session kill --grace 1s` leaves when it dies right after its commit: the request, and no signal. */
async function killThatDies(dir: string, env: NodeJS.ProcessEnv, id: string): Promise<void> {
  const requester = spawnSync(process.execPath, ['-e', ''])
  expect(requester.status).toBe(0)
  const store = new SessionStore(join(dir, '.harness', 'sessions'), { sealer: RecordSealer.forEnv(env) })
  const committed = await commitStopRequest(store, id, stopRequest('kill', 1000, requester.pid, Date.now()))
  expect(committed.stop_request).toMatchObject({ action: 'kill', by_pid: requester.pid, grace_ms: 1000 })
}

/** SIGSTOPs `pid` at a moment it does not hold the lock at `lockPath` (else lets it run on a little, and again). */
async function freezeOutsideLock(pid: number, lockPath: string): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    process.kill(pid, 'SIGSTOP')
    let holder: number | undefined
    try {
      holder = (JSON.parse(readFileSync(lockPath, 'utf8')) as { pid?: number }).pid
    } catch {}
    if (holder !== pid) return
    process.kill(pid, 'SIGCONT')
    if (Date.now() > deadline)
      throw new Error('timed out waiting for the supervisor to release the record lock')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('stops that survive their requester', () => {
  test.each(['background', 'foreground'] as const)(
    'a %s run: kill dies after committing its request; the supervisor stops the whole tree (KILLED)',
    async (mode) => {
      const { dir, env: base } = tmpPlainDir()
      // SIGTERM is ignored by the agent and its two children: only the SIGKILL after the grace period ends them.
      const agents = fakeAgents(join(dir, '..'), base, { ignoreTerm: true, children: 2, sleepMs: 120_000 })
      let id: string
      let foreground: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined
      if (mode === 'background') {
        const run = await cli(['run', '-a', 'claude', '--detach', '--json', 'task'], {
          cwd: dir,
          env: agents.env,
        })
        expect(run.exitCode, run.stderr).toBe(0)
        id = json<Rec>(run).id
      } else {
        // Not a terminal on stdin: a headless foreground run, harness itself is the supervisor.
        const run = spawn(HARNESS_BIN, ['run', '-a', 'claude', '--json', 'task'], {
          cwd: dir,
          env: agents.env,
          stdio: 'ignore',
        })
        foreground = exitOf(run)
        id = await waitFor('the session', () => onlySession(dir))
      }
      await waitFor('the agent and its children', () => agents.pids().length >= 3)
      const pids = agents.pids()

      await killThatDies(dir, agents.env, id)

      const record = await waitFor(
        'the final status',
        () => {
          const r = recordIfAny<Rec>(dir, id)
          return r && r.status !== 'RUNNING' ? r : undefined
        },
        30_000,
      )
      expect(record.status).toBe('KILLED')
      expect(record.stop_reason).toBe('killed')
      expect(record.runs.at(-1)?.signal).toBe('SIGKILL')
      await waitFor('every process of the tree to be gone', () => pids.every((pid) => !isAlive(pid)))
      if (foreground) expect((await foreground).code).toBe(128 + 9)
    },
    90_000,
  )

  test('an agent that exits by itself before the stop reaches it keeps its own status; kill exits 4', async () => {
    const { dir, env } = tmpPlainDir()
    const go = join(dir, '..', 'go')
    const script = `while [ ! -e '${go}' ]; do sleep 0.05; done; exit 0`
    const { id, supervisor, agent } = await detachedRun(dir, env, ['sh', '-c', script])
    // The supervisor is frozen: it can neither see the request nor receive the kill's SIGTERM yet. Never while
    // it holds the record's lock (it may still be finishing the write that named the agent): the kill could not
    // commit its request then, and would give up on a busy lock.
    await freezeOutsideLock(supervisor, join(dir, '.harness', 'sessions', `${id}.lock`))
    try {
      const kill = spawn(HARNESS_BIN, ['session', 'kill', id, '--grace', '30s'], {
        cwd: dir,
        env,
        stdio: 'ignore',
      })
      const killed = exitOf(kill)
      await waitFor('the committed stop request', () => recordIfAny<Rec>(dir, id)?.stop_request)
      // The agent ends by itself, before anything signalled it.
      writeFileSync(go, '')
      await waitFor('the agent to exit', () => !isAlive(agent))
      process.kill(supervisor, 'SIGCONT')
      expect((await killed).code).toBe(4)
    } finally {
      try {
        process.kill(supervisor, 'SIGCONT')
      } catch {}
    }
    const record = recordIfAny<Rec>(dir, id)
    expect(record).toMatchObject({
      status: 'COMPLETED',
      exit_code: 0,
      stop_reason: 'exited',
      stop_request: null,
    })
  })

  test('an agent killed by a signal from elsewhere while a committed kill waits on a slow supervisor is KILLED', async () => {
    // The kill's request was committed first (SPEC §4); the supervisor, frozen (a busy machine), never got to
    // signal the agent itself, which died meanwhile of a SIGKILL to its group (the requester stopping it
    // directly, or anyone). Recorded FAILED before: the supervisor judged the death a signal it did not send.
    const { dir, env } = tmpPlainDir()
    const { id, supervisor, agent } = await detachedRun(dir, env, ['sleep', '600'])
    await freezeOutsideLock(supervisor, join(dir, '.harness', 'sessions', `${id}.lock`))
    try {
      await killThatDies(dir, env, id)
      process.kill(-agent, 'SIGKILL')
      await waitFor('the agent to be gone', () => !isAlive(agent))
    } finally {
      process.kill(supervisor, 'SIGCONT')
    }
    const record = await waitFor('the outcome', () => {
      const found = recordIfAny<Rec>(dir, id)
      return found?.status !== 'RUNNING' ? found : undefined
    })
    expect(record).toMatchObject({ status: 'KILLED', stop_reason: 'killed', exit_code: 137 })
  })
})

/** Starts `argv` as a detached exec session in `dir`: its id and the pids of its supervisor and agent. */
async function detachedRun(dir: string, env: NodeJS.ProcessEnv, argv: string[]) {
  const run = await cli(['run', '-a', 'exec', '--detach', '--json', '--', ...argv], { cwd: dir, env })
  expect(run.exitCode, run.stderr).toBe(0)
  const { id, runs } = json<Rec>(run)
  return { id, supervisor: runs[0]?.supervisor_pid as number, agent: runs[0]?.pid as number }
}
