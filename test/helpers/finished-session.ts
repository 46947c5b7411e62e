import { expect } from 'vitest'
import { cli, json } from './cli.js'
import type { SessionJson } from './sessions.js'
import type { TmpRepo } from './tmp.js'

/**
 * The finished session that `harness run -a exec --json [extra] -- sh -c <script>` makes in `repo` (exit 0
 * expected); returns what it prints, the record. Like every foreground run through `cli`, it runs inside the
 * test worker through the binary's own entry unless it cannot (a background flag, auto cleanup turned on) or
 * `process` asks for the binary: the same worktree, branch, record, log and checkpoints without starting node.
 * test/e2e/finished-session.test.ts checks the two against each other.
 *
 * A record made in the worker names the test worker as the run's supervisor (a live process with its true
 * start time), where the binary's supervisor has exited. A test that edits such a record back to RUNNING must
 * also change the supervisor's identity (its pid, start time or `boot_id`): otherwise harness sees a live
 * supervisor, and a `session kill` would signal the test worker.
 */
export async function finishedSession(
  repo: TmpRepo,
  script = 'true',
  extra: string[] = [],
  options: { process?: boolean } = {},
): Promise<SessionJson> {
  const run = await cli(['run', '-a', 'exec', '--json', ...extra, '--', 'sh', '-c', script], {
    cwd: repo.dir,
    env: repo.env,
    process: options.process,
  })
  expect(run.exitCode, run.stderr).toBe(0)
  return json<SessionJson>(run)
}
