import { cliInProcess } from './cli.js'
import { execSession, type SessionJson } from './sessions.js'
import type { TmpRepo } from './tmp.js'

/** Flags that start harness itself again in the background, which a test worker cannot stand in for. */
const BACKGROUND_FLAGS = ['-d', '--detach', '--tmux', '--attach']

/** How the product reads HARNESS_AUTO_CLEANUP (sessions/auto-cleanup.ts): these values turn it off. */
const AUTO_CLEANUP_OFF = ['0', 'off', 'false']

/** Signals the run's guard and supervisor listen to while they work; none may stay behind in the worker. */
const RUN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']

function signalListeners(): string {
  return RUN_SIGNALS.map((signal) => `${signal}:${process.listenerCount(signal)}`).join(' ')
}

/**
 * The finished session that `harness run -a exec --json [extra] -- sh -c <script>` makes in `repo` (exit 0
 * expected), run inside the test worker through the binary's own entry (`cliInProcess`): the same worktree,
 * branch, record, log and checkpoints, without starting node. Returns what `run --json` prints, the record.
 * test/e2e/finished-session.test.ts checks it against the binary's.
 *
 * A run in the background (--detach, --tmux), and one in a project where it would start auto cleanup (a
 * detached harness), go through the binary instead: only a harness process can start harness again.
 *
 * Its record names the test worker as the run's supervisor (a live process with its true start time), where
 * the binary's supervisor has exited. A test that edits such a record back to RUNNING must also change the
 * supervisor's identity (its pid, start time or `boot_id`): otherwise harness sees a live supervisor, and a
 * `session kill` would signal the test worker.
 */
export async function finishedSession(
  repo: TmpRepo,
  script = 'true',
  extra: string[] = [],
): Promise<SessionJson> {
  const background = extra.some((arg) => BACKGROUND_FLAGS.includes(arg))
  const autoCleanupOff = AUTO_CLEANUP_OFF.includes(repo.env.HARNESS_AUTO_CLEANUP?.toLowerCase() ?? '')
  if (background || !autoCleanupOff) return execSession(repo, script, extra)

  const listenersBefore = signalListeners()
  const result = await cliInProcess(['run', '-a', 'exec', '--json', ...extra, '--', 'sh', '-c', script], {
    cwd: repo.dir,
    env: repo.env,
  })
  const listenersAfter = signalListeners()
  if (listenersAfter !== listenersBefore) {
    throw new Error(
      `the run left signal listeners behind: ${listenersBefore} before, ${listenersAfter} after`,
    )
  }
  if (result.exitCode !== 0)
    throw new Error(`the in-process run ended with ${result.exitCode}:\n${result.stderr}`)
  return JSON.parse(result.stdout) as SessionJson
}
