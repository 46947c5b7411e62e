import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { readRecords } from '../helpers/sessions.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote, TmuxServer, waitFor } from '../helpers/tmux.js'

/**
 * The stress of docs/security.md, "Crashes, interrupts, shared steps and deadlines". `npm test` runs one round
 * of each; `npm run stress` (scripts/stress.mjs, HARNESS_STRESS=full) runs them all and prints the figures:
 * - 60 random SIGKILLs of foreground and detached runs whose agents exit at once, 10 rounds: `list --json`
 *   then shows no record RUNNING and none `unverified`;
 * - a foreground interactive run in a tmux pane whose pane is killed, 20 times: 20 PAUSED `hangup`;
 * - 50 parallel `run`s in one repository, 3 rounds: all start.
 */
const FULL = process.env.HARNESS_STRESS === 'full'
const KILL_ROUNDS = FULL ? 10 : 1
const KILLS = 60
const AT_ONCE = 10
const HANGUPS = FULL ? 20 : 2
const PARALLEL_ROUNDS = FULL ? 3 : 1
const PARALLEL = 50

interface Listed {
  id: string
  status: string
  liveness?: string
  stop_reason?: string
}

/** Counts of each value, for the figures. */
function tally(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1
  return counts
}

/** A detached run's supervisor, once its record names it (to kill it too). */
function supervisorOf(dir: string, id: string): number | null {
  try {
    const record = JSON.parse(readFileSync(join(dir, '.harness', 'sessions', `${id}.json`), 'utf8'))
    const pid = record.runs?.[0]?.supervisor_pid
    if (typeof pid !== 'number') return null
    // Only harness's own supervisor, never a process that took its pid since.
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('__supervise') ? pid : null
  } catch {
    return null
  }
}

describe('stress', () => {
  const kills = `${KILL_ROUNDS} × ${KILLS} runs SIGKILLed at random instants, agents that exit at once: then nothing is RUNNING or unverified`
  test(
    kills,
    async () => {
      const figures: string[] = []
      for (let round = 0; round < KILL_ROUNDS; round++) {
        const repo = tmpGitRepo()
        const agents = fakeAgents(repo.home, { ...repo.env, HARNESS_AUTO_CLEANUP: 'off' })
        const env = agents.env
        const killOne = async (i: number) => {
          const id = `k${round}-${i}`
          const detached = i % 2 === 1
          // `true` exits before harness can look at it: the record must still never name a pid it cannot check.
          const args = [
            'run',
            '--session-id',
            id,
            ...(detached ? ['--detach'] : []),
            '-a',
            'exec',
            '--',
            'true',
          ]
          // Every other run without a worktree: more of the kills then fall around the agent's start and end.
          if (i % 4 >= 2) args.splice(1, 0, '--no-worktree')
          const child = spawn(HARNESS_BIN, args, { cwd: repo.dir, env, stdio: 'ignore' })
          const exited = new Promise((resolve) => child.on('exit', resolve))
          let over = false
          void exited.then(() => {
            over = true
          })
          const kill = () => {
            try {
              child.kill('SIGKILL')
            } catch {}
            // A detached run's supervisor is killed with its launcher half of the time.
            const supervisor = detached && Math.random() < 0.5 ? supervisorOf(repo.dir, id) : null
            if (supervisor) {
              try {
                process.kill(supervisor, 'SIGKILL')
              } catch {}
            }
          }
          // A third of the kills at any instant of the run, from its set-up on; the others within 400 ms of its
          // record's first write, where a run's agent starts and ends (however slow the runtime's start).
          const record = join(repo.dir, '.harness', 'sessions', `${id}.json`)
          if (i % 3 !== 0) {
            while (!over && !existsSync(record)) await new Promise((resolve) => setTimeout(resolve, 5))
          }
          const timer = setTimeout(kill, Math.random() * (i % 3 === 0 ? 1500 : 400))
          await exited
          clearTimeout(timer)
        }
        for (let i = 0; i < KILLS; i += AT_ONCE) {
          await Promise.all(Array.from({ length: AT_ONCE }, (_, k) => killOne(i + k)))
        }
        // Supervisors left alive finish their (instant) agents; list reconciles what the kills left stale.
        const list = async () => {
          const result = await cli(['session', 'list', '--json'], { cwd: repo.dir, env })
          expect(result.exitCode, result.stderr).toBe(0)
          return json<Listed[]>(result)
        }
        let listed = await list()
        const deadline = Date.now() + 120_000
        while (
          listed.some((s) => s.status === 'RUNNING' && s.liveness === 'running') &&
          Date.now() < deadline
        ) {
          await new Promise((resolve) => setTimeout(resolve, 250))
          listed = await list()
        }
        const running = listed.filter((s) => s.status === 'RUNNING')
        const unverified = listed.filter((s) => s.liveness === 'unverified')
        figures.push(
          `round ${round + 1}: ${listed.length} records, RUNNING ${running.length}, unverified ${unverified.length}, ` +
            JSON.stringify(
              tally(listed.map((s) => `${s.status}${s.stop_reason ? `/${s.stop_reason}` : ''}`)),
            ),
        )
        expect(running, JSON.stringify(running)).toEqual([])
        expect(unverified).toEqual([])
      }
      console.info(`SIGKILLs (${KILLS} a round):\n${figures.join('\n')}`)
    },
    KILL_ROUNDS * 300_000,
  )

  test(
    `a foreground interactive run whose tmux pane is killed, ${HANGUPS} times: PAUSED "hangup" each time`,
    async () => {
      const tmux = new TmuxServer(tmpDir())
      try {
        const repo = tmpGitRepo()
        const outcomes: string[] = []
        for (let i = 0; i < HANGUPS; i++) {
          const id = `hup-${i}`
          // Half of them hold the terminal raw and exit as soon as it hangs up (before harness hears of it); the
          // others die of the SIGHUP the terminal's end brings them, at the moment harness gets its own.
          const raw = i % 2 === 0
          const agents = fakeAgents(repo.home, repo.env, { sleepMs: 60_000, raw })
          const script = `cd ${shellQuote(repo.dir)}\n${shellQuote(HARNESS_BIN)} run -a claude --session-id ${id} task`
          await tmux.start(id, script, agents.env)
          const start = await waitFor('the agent to start', () =>
            agents.starts().find((e) => e.session === id),
          )
          if (raw) {
            await waitFor('the agent to hold the terminal', () =>
              agents.entries().some((e) => e.event === 'raw' && e.pid === start.pid),
            )
          }
          tmux.killSession(id)
          const record = await waitFor('the outcome', () =>
            readRecords<Listed & { exit_code: number | null }>(repo.dir).find(
              (r) => r.id === id && r.status !== 'RUNNING',
            ),
          )
          outcomes.push(`${record.status}/${record.stop_reason}/${record.exit_code}`)
        }
        console.info(`panes killed: ${HANGUPS}:`, tally(outcomes))
        expect(outcomes).toEqual(Array(HANGUPS).fill('PAUSED/hangup/129'))
      } finally {
        tmux.stop()
      }
    },
    HANGUPS * 60_000,
  )

  test(
    `${PARALLEL} parallel runs in one repository, ${PARALLEL_ROUNDS} round(s): all start`,
    async () => {
      const figures: string[] = []
      for (let round = 0; round < PARALLEL_ROUNDS; round++) {
        const repo = tmpGitRepo()
        const agents = fakeAgents(repo.home, { ...repo.env, HARNESS_AUTO_CLEANUP: 'off' })
        const runs = await Promise.all(
          Array.from({ length: PARALLEL }, () =>
            cli(['run', '--detach', '--json', '-a', 'codex', 'task'], {
              cwd: repo.dir,
              env: agents.env,
              timeoutMs: 600_000,
            }),
          ),
        )
        const codes = tally(runs.map((run) => String(run.exitCode)))
        figures.push(`round ${round + 1}: exit codes ${JSON.stringify(codes)}`)
        const failed = runs.filter((run) => run.exitCode !== 0).map((run) => run.stderr)
        expect(failed).toEqual([])
        expect(new Set(runs.map((run) => json<Listed>(run).id)).size).toBe(PARALLEL)
      }
      console.info(`parallel runs (${PARALLEL} a round):\n${figures.join('\n')}`)
    },
    PARALLEL_ROUNDS * 600_000,
  )
})
