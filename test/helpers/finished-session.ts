import { Writable } from 'node:stream'
import { Context } from '../../src/cli/context.js'
import { Output } from '../../src/cli/output.js'
import { promptWords } from '../../src/commands/run.js'
import { ExitRequest, HarnessError } from '../../src/errors.js'
import { type StartOptions, startSession } from '../../src/sessions/start.js'
import { execSession, type SessionJson } from './sessions.js'
import type { TmpRepo } from './tmp.js'

/** Text written to it is kept: the in-process run's stdout and stderr. */
class CapturedStream extends Writable {
  text = ''

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void) {
    this.text += chunk.toString()
    done()
  }
}

/**
 * The CLI's own Context for `harness run --json` started in `repo.dir` with `repo.env`, except for what belongs
 * to the test worker's process: the agent's output goes to `agentOutput` (stderr in the CLI under --json), and
 * stdin is never a terminal (the CLI's is closed by the spawning helper).
 */
class TestRunContext extends Context {
  constructor(
    out: Output,
    passthrough: string[],
    repo: TmpRepo,
    private readonly capturedAgentOutput: NodeJS.WritableStream,
  ) {
    super(out, passthrough, repo.dir, repo.env)
  }

  override get stdinIsTerminal(): boolean {
    return false
  }

  override get agentOutput(): NodeJS.WritableStream {
    return this.capturedAgentOutput
  }
}

/** What `run` flags the in-process run honours, as the run command turns them into start options. */
interface RunFlags {
  sessionId?: string
  branch?: string
  prompt?: string
  worktree: boolean
}

/**
 * The `run` flags a setup call may pass, read as commander reads them; null for any other flag (or form), whose
 * call then goes through the binary: --detach and --tmux start harness itself again, which a test worker cannot
 * stand in for.
 */
function runFlags(extra: string[]): RunFlags | null {
  const flags: RunFlags = { worktree: true }
  for (let i = 0; i < extra.length; i++) {
    const flag = extra[i]
    const value = extra[i + 1]
    if (flag === '--no-worktree') flags.worktree = false
    else if (value === undefined) return null
    else if (flag === '--session-id') flags.sessionId = value
    else if (flag === '--branch') flags.branch = value
    else if (flag === '--prompt') flags.prompt = value
    else return null
    if (flag !== '--no-worktree') i++
  }
  return flags
}

/** How the product reads HARNESS_AUTO_CLEANUP (sessions/auto-cleanup.ts): these values turn it off. */
const AUTO_CLEANUP_OFF = ['0', 'off', 'false']

/** Signals the run's guard and supervisor listen to while they work; none may stay behind in the worker. */
const RUN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']

function signalListeners(): string {
  return RUN_SIGNALS.map((signal) => `${signal}:${process.listenerCount(signal)}`).join(' ')
}

/**
 * The finished session that `harness run -a exec --json [extra] -- sh -c <script>` makes in `repo` (exit 0
 * expected), made inside the test worker by the use case the CLI's run command calls (`startSession`) with the
 * CLI's Context: the same worktree, branch, record, log and checkpoints, without starting node. Returns what
 * `run --json` prints, the record. test/e2e/finished-session.test.ts checks it against the binary's.
 *
 * Flags it cannot honour as the CLI would, and a project where the run would start auto cleanup in the
 * background (a detached harness), go through the binary instead.
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
  const flags = runFlags(extra)
  const autoCleanupOff = AUTO_CLEANUP_OFF.includes(repo.env.HARNESS_AUTO_CLEANUP?.toLowerCase() ?? '')
  if (!flags || !autoCleanupOff) return execSession(repo, script, extra)

  const stdout = new CapturedStream()
  const stderr = new CapturedStream()
  const out = new Output(
    { json: true, color: true, quiet: false },
    stdout as unknown as NodeJS.WriteStream,
    stderr as unknown as NodeJS.WriteStream,
  )
  const ctx = new TestRunContext(out, ['sh', '-c', script], repo, stderr)
  // As commands/run.ts builds them from `run -a exec [flags]` (no prompt on stdin: the exec agent takes none).
  const options: StartOptions = {
    agent: 'exec',
    worktree: flags.worktree,
    branch: flags.branch,
    sessionId: flags.sessionId,
    detach: false,
    tmux: undefined,
    prompt: promptWords(flags.prompt, []),
    extraArgs: ctx.passthrough,
  }
  const listenersBefore = signalListeners()
  let exitCode: number
  try {
    const outcome = await startSession(ctx, options)
    out.result(outcome.record, () => '')
    exitCode = outcome.exit?.exitCode ?? 0
  } catch (error) {
    // What the CLI would report and exit with; anything else is a bug worth its stack.
    if (!(error instanceof HarnessError || error instanceof ExitRequest)) throw error
    exitCode = out.error(error)
  }
  const listenersAfter = signalListeners()
  if (listenersAfter !== listenersBefore) {
    throw new Error(
      `the run left signal listeners behind: ${listenersBefore} before, ${listenersAfter} after`,
    )
  }
  if (exitCode !== 0) throw new Error(`the in-process run ended with ${exitCode}:\n${stderr.text}`)
  return JSON.parse(stdout.text) as SessionJson
}
