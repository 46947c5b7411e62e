import { expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { tmpGitRepo } from '../helpers/tmp.js'

/**
 * SPEC §9, "Aims at scale": detached sessions started at once all start, and each ends with its own agent's
 * exit code and the status that goes with it; none is lost. The bench starts 200 (bench/scale.mjs); this is
 * the same check at a size the suite affords.
 */
const SESSIONS = 40

interface Listed {
  id: string
  status: string
  exit_code: number | null
}

test(`${SESSIONS} detached sessions started at once each end with their own exit code`, async () => {
  const repo = tmpGitRepo()
  const env = { ...repo.env, HARNESS_AUTO_CLEANUP: 'off' }
  const plans = Array.from({ length: SESSIONS }, (_, i) => ({
    sleep: 1 + (i % 3),
    code: i % 5 === 0 ? 0 : i % 5,
  }))
  const started = await Promise.all(
    plans.map((plan) =>
      cli(
        [
          'run',
          '-q',
          '--no-worktree',
          '--detach',
          '-a',
          'exec',
          '--',
          'sh',
          '-c',
          `sleep ${plan.sleep}; exit ${plan.code}`,
        ],
        { cwd: repo.dir, env, timeoutMs: 240_000 },
      ),
    ),
  )
  for (const run of started) expect(run.exitCode, run.stderr).toBe(0)
  const ids = started.map((run) => run.stdout.trim())
  expect(new Set(ids).size).toBe(SESSIONS)
  // `session wait` exits with each one's recorded code once it is no longer RUNNING.
  const waited = await Promise.all(
    ids.map((id) =>
      cli(['session', 'wait', id, '--timeout', '240'], { cwd: repo.dir, env, timeoutMs: 260_000 }),
    ),
  )
  const listed = new Map(
    json<Listed[]>(await cli(['session', 'list', '--json'], { cwd: repo.dir, env })).map((s) => [s.id, s]),
  )
  ids.forEach((id, i) => {
    const { code } = plans[i] as { code: number }
    expect(waited[i]?.exitCode, `${id}: ${waited[i]?.stderr}`).toBe(code)
    expect(listed.get(id)).toMatchObject({ status: code === 0 ? 'COMPLETED' : 'FAILED', exit_code: code })
  })
}, 600_000)
